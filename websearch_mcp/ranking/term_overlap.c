/* How many terms each pair of texts shares, for `neighbours.nearest`.

In Python each pair is `len(mine & theirs)`: a new set per pair, filled and freed, about a
tenth of `rank()` for the head's 190 pairs. Here every distinct term gets a number once (an
open-addressing table keyed by the strings' own hashes, equal strings by value), each text
becomes a bit set of its terms' numbers, and a pair's count is the bits its two sets share.
The terms must be str (no Python code runs while the table holds borrowed references); memory
is a few words per term and a bit per term for each text.

Built only with the compiled modules (setup.py, WEBSEARCH_MCP_COMPILE=1); without it
`neighbours` counts with set intersections, with the same result. */

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

PyDoc_STRVAR(shared_counts_doc,
             "shared_counts(texts, /)\n--\n\n"
             "For each pair (i, j), i < j, of the sets of str `texts`, in that order: "
             "len(texts[i] & texts[j]).");

static PyObject *
shared_counts(PyObject *module, PyObject *arg)
{
    PyObject *texts = PySequence_Fast(arg, "shared_counts() wants a sequence of sets of str");
    if (texts == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(texts), total = 0;
    PyObject **items = PySequence_Fast_ITEMS(texts);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyAnySet_Check(items[i])) {
            PyErr_Format(PyExc_TypeError, "shared_counts() wants sets of str, not %.100s",
                         Py_TYPE(items[i])->tp_name);
            Py_DECREF(texts);
            return NULL;
        }
        total += PySet_GET_SIZE(items[i]);
    }
    size_t capacity = 8;
    while (capacity < (size_t)total * 2)
        capacity *= 2;
    size_t words = ((size_t)total + 63) / 64;
    Slot *slots = PyMem_Calloc(capacity, sizeof(Slot));
    uint64_t *bits = PyMem_Calloc(n * words + 1, sizeof(uint64_t));
    PyObject *out = NULL;
    if (slots == NULL || bits == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *iterator = PyObject_GetIter(items[i]), *term;
        if (iterator == NULL)
            goto done;
        uint64_t *mine = bits + i * words;
        /* The sets are not changed meanwhile (no Python code runs: the terms are exact str), so
           each term outlives the reference the iterator gave. */
        while ((term = PyIter_Next(iterator)) != NULL) {
            Py_DECREF(term);
            if (!PyUnicode_CheckExact(term)) {
                PyErr_Format(PyExc_TypeError, "shared_counts() wants sets of str, not of %.100s",
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
            goto done;
    }
    out = PyList_New(n > 1 ? n * (n - 1) / 2 : 0);
    if (out == NULL)
        goto done;
    Py_ssize_t pair = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint64_t *mine = bits + i * words;
        for (Py_ssize_t j = i + 1; j < n; j++) {
            const uint64_t *theirs = bits + j * words;
            long shared = 0;
            for (size_t w = 0; w < words; w++)
                shared += __builtin_popcountll(mine[w] & theirs[w]);
            PyObject *value = PyLong_FromLong(shared);
            if (value == NULL) {
                Py_CLEAR(out);
                goto done;
            }
            PyList_SET_ITEM(out, pair++, value);
        }
    }
done:
    PyMem_Free(slots);
    PyMem_Free(bits);
    Py_DECREF(texts);
    return out;
}

static PyMethodDef term_overlap_methods[] = {
    {"shared_counts", shared_counts, METH_O, shared_counts_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef term_overlap_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "websearch_mcp.ranking.term_overlap",
    .m_doc = "How many terms each pair of texts shares, counted on bit sets.",
    .m_size = -1,
    .m_methods = term_overlap_methods,
};

PyMODINIT_FUNC
PyInit_term_overlap(void)
{
    return PyModule_Create(&term_overlap_module);
}
