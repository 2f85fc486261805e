/* Each text's nearest texts by shared terms, and every pair's count of them, for
`neighbours.overlap`.

In Python each pair is `len(mine & theirs)`: a new set per pair, filled and freed, and each
row a list of (similarity, index) tuples sorted whole to keep its first few: about a twelfth
of `rank()` for the head's 190 pairs. Here every distinct term gets a number once (an
open-addressing table keyed by the strings' own hashes, equal strings by value), each text
becomes a bit set of its terms' numbers, a pair's count is the bits its two sets share, and
each row keeps its nearest in a small sorted buffer: only those become Python objects, with
the counts (small ints, which Python shares) that MMR reads for the same texts.
The terms must be str (no Python code runs while the table holds borrowed references); memory
is a few words per term and a bit per term for each text.

Built only with the compiled modules (setup.py, WEBSEARCH_MCP_COMPILE=1); without it
`neighbours.overlap` counts with set intersections, with the same result. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    PyObject *term; /* borrowed from a set the caller's sequence holds; NULL when empty */
    Py_hash_t hash;
    Py_ssize_t number;
} Slot;

/* The number of `term` (hash `hash`) in `slots` (capacity `mask` + 1, never full), given the
   next free number `*count` when it is new; -1 with an exception set on error. */
static Py_ssize_t
number_of(Slot *slots, size_t mask, PyObject *term, Py_hash_t hash, Py_ssize_t *count)
{
    for (size_t at = (size_t)hash & mask;; at = (at + 1) & mask) {
        Slot *slot = &slots[at];
        if (slot->term == NULL) {
            slot->term = term;
            slot->hash = hash;
            slot->number = (*count)++;
            return slot->number;
        }
        if (slot->hash == hash &&
            (slot->term == term || PyUnicode_Compare(slot->term, term) == 0))
            return slot->number;
        if (PyErr_Occurred())
            return -1;
    }
}

/* The terms of each of `items` (n sets of exact str) as a bit set of `*words` 64-bit words,
   one after another, each term numbered once; NULL with an exception set on error. */
static uint64_t *
term_bits(PyObject **items, Py_ssize_t n, size_t *words)
{
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyAnySet_Check(items[i])) {
            PyErr_Format(PyExc_TypeError, "overlap() wants sets of str, not %.100s",
                         Py_TYPE(items[i])->tp_name);
            return NULL;
        }
        total += PySet_GET_SIZE(items[i]);
    }
    size_t capacity = 8;
    while (capacity < (size_t)total * 2)
        capacity *= 2;
    *words = ((size_t)total + 63) / 64;
    Slot *slots = PyMem_Calloc(capacity, sizeof(Slot));
    uint64_t *bits = PyMem_Calloc(n * *words + 1, sizeof(uint64_t));
    if (slots == NULL || bits == NULL) {
        PyErr_NoMemory();
        goto failed;
    }
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *iterator = PyObject_GetIter(items[i]), *term;
        if (iterator == NULL)
            goto failed;
        uint64_t *mine = bits + i * *words;
        /* The sets are not changed meanwhile (no Python code runs: the terms are exact str), so
           each term outlives the reference the iterator gave. */
        while ((term = PyIter_Next(iterator)) != NULL) {
            Py_DECREF(term);
            if (!PyUnicode_CheckExact(term)) {
                PyErr_Format(PyExc_TypeError, "overlap() wants sets of str, not of %.100s",
                             Py_TYPE(term)->tp_name);
                break;
            }
            Py_hash_t hash = PyObject_Hash(term);
            Py_ssize_t number =
                hash == -1 ? -1 : number_of(slots, capacity - 1, term, hash, &count);
            if (number < 0)
                break;
            mine[number / 64] |= (uint64_t)1 << (number % 64);
        }
        Py_DECREF(iterator);
        if (PyErr_Occurred())
            goto failed;
    }
    PyMem_Free(slots);
    return bits;
failed:
    PyMem_Free(slots);
    PyMem_Free(bits);
    return NULL;
}

typedef struct {
    double similarity; /* negated: the most similar sorts first */
    Py_ssize_t index;
} Neighbour;

static int
before(const Neighbour *a, const Neighbour *b)
{
    return a->similarity < b->similarity ||
           (a->similarity == b->similarity && a->index < b->index);
}

/* One text's row: its `kept` nearest of `row` (`*found` of them so far, best first), with
   `candidate` put in its place when it is among them. */
static void
keep(Neighbour *row, Py_ssize_t *found, Py_ssize_t kept, Neighbour candidate)
{
    Py_ssize_t at = *found;
    if (at == kept) {
        if (kept == 0 || !before(&candidate, &row[kept - 1]))
            return;
        at--;
    }
    else
        (*found)++;
    for (; at > 0 && before(&candidate, &row[at - 1]); at--)
        row[at] = row[at - 1];
    row[at] = candidate;
}

PyDoc_STRVAR(overlap_doc,
             "overlap(texts, count, /)\n--\n\n"
             "`neighbours.overlap` for sets of str: (rows, shared). Per text, its `count` most "
             "similar other texts as (-similarity, index), most similar first (ties: the lower "
             "index), leaving out those sharing no term; similarity is Jaccard's. "
             "`shared[i][j]`: how many terms texts i and j share (0 where i == j).");

/* Row i of the shared counts as a list of ints; NULL on an error. */
static PyObject *
count_row(const Py_ssize_t *shared, Py_ssize_t n, Py_ssize_t i)
{
    PyObject *row = PyList_New(n);
    for (Py_ssize_t j = 0; row != NULL && j < n; j++) {
        PyObject *count = PyLong_FromSsize_t(j == i ? 0 : shared[i * n + j]);
        if (count == NULL)
            Py_CLEAR(row);
        else
            PyList_SET_ITEM(row, j, count);
    }
    return row;
}

static PyObject *
overlap(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "overlap() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_ssize_t kept = PyLong_AsSsize_t(args[1]);
    if (kept == -1 && PyErr_Occurred())
        return NULL;
    if (kept < 0) {
        PyErr_SetString(PyExc_ValueError, "overlap() wants a count of 0 or more");
        return NULL;
    }
    PyObject *texts = PySequence_Fast(args[0], "overlap() wants a sequence of sets of str");
    if (texts == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(texts);
    PyObject **items = PySequence_Fast_ITEMS(texts);
    if (kept > n)
        kept = n;
    size_t words = 0;
    uint64_t *bits = term_bits(items, n, &words);
    /* Each pair's count, (i, j) and (j, i) alike, counted once. */
    Py_ssize_t *shared = PyMem_Malloc((n * n + 1) * sizeof(Py_ssize_t));
    Neighbour *row = PyMem_Malloc((kept + 1) * sizeof(Neighbour));
    PyObject *out = NULL, *rows = NULL, *counts = NULL;
    if (bits == NULL || shared == NULL || row == NULL) {
        if (bits != NULL)
            PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint64_t *mine = bits + i * words;
        for (Py_ssize_t j = i + 1; j < n; j++) {
            const uint64_t *theirs = bits + j * words;
            Py_ssize_t count = 0;
            /* A text's few terms leave most words of two texts' sets without a shared bit:
               those need no count. */
            for (size_t w = 0; w < words; w++) {
                uint64_t both = mine[w] & theirs[w];
                if (both != 0)
                    count += __builtin_popcountll(both);
            }
            shared[i * n + j] = shared[j * n + i] = count;
        }
    }
    if ((rows = PyList_New(n)) == NULL || (counts = PyList_New(n)) == NULL)
        goto failed;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row_counts = count_row(shared, n, i);
        if (row_counts == NULL)
            goto failed;
        PyList_SET_ITEM(counts, i, row_counts);
        Py_ssize_t size = PySet_GET_SIZE(items[i]), found = 0;
        for (Py_ssize_t j = 0; j < n; j++) {
            Py_ssize_t count = shared[i * n + j];
            if (j == i || count == 0)
                continue;
            /* As Python divides these small ints: each is exact as a double. */
            Neighbour candidate = {
                (double)-count / (double)(size + PySet_GET_SIZE(items[j]) - count), j};
            keep(row, &found, kept, candidate);
        }
        PyObject *near = PyList_New(found);
        if (near == NULL)
            goto failed;
        PyList_SET_ITEM(rows, i, near);
        for (Py_ssize_t k = 0; k < found; k++) {
            PyObject *pair = PyTuple_New(2), *similarity, *index;
            if (pair == NULL)
                goto failed;
            PyList_SET_ITEM(near, k, pair);
            if ((similarity = PyFloat_FromDouble(row[k].similarity)) != NULL)
                PyTuple_SET_ITEM(pair, 0, similarity);
            if ((index = PyLong_FromSsize_t(row[k].index)) != NULL)
                PyTuple_SET_ITEM(pair, 1, index);
            if (similarity == NULL || index == NULL)
                goto failed;
        }
    }
    out = PyTuple_Pack(2, rows, counts);
failed:
    Py_XDECREF(rows);
    Py_XDECREF(counts);
done:
    PyMem_Free(bits);
    PyMem_Free(shared);
    PyMem_Free(row);
    Py_DECREF(texts);
    return out;
}

static PyMethodDef term_overlap_methods[] = {
    {"overlap", (PyCFunction)(void (*)(void))overlap, METH_FASTCALL, overlap_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef term_overlap_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "websearch_mcp.ranking.term_overlap",
    .m_doc = "Each text's most similar texts and every pair's shared terms, counted on bit sets.",
    .m_size = -1,
    .m_methods = term_overlap_methods,
};

PyMODINIT_FUNC
PyInit_term_overlap(void)
{
    return PyModule_Create(&term_overlap_module);
}
