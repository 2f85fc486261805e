/* Chunks of ASCII text -> their content terms, with no Python object made per chunk.

`tokens.read` folds a text (lower case, separators to spaces), splits it into chunks and looks
each chunk up in its term cache: in Python that is a bytes object, a hash and a dict look-up per
chunk, a third of `rank()`. A ChunkTable does the same in one pass over the text's bytes: each
chunk is folded and hashed (FNV-1a) at once and found in an open-addressing table of the chunks
seen before. A probe stops after MAX_PROBE slots: chunks crafted to collide are then looked up in
the cache (a dict, with CPython's keyed hash) and not remembered, so that they cost a bounded
number of comparisons each. A chunk not found is looked up in the term cache (`cache[chunk]`, a
bytes key, which reads new chunks and registers compounds) and remembered, up to `limit` chunks;
past that, chunks are still looked up, only not remembered. `tokens._TermCache` clears its table
whenever it starts a new generation, so the table never holds a chunk the cache has let go.

Built only with the compiled modules (setup.py, WEBSEARCH_MCP_COMPILE=1); without it `tokens`
reads chunks in Python, with the same result. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Longer chunks (rare: long identifiers, base64) skip the table and go to the cache directly. */
#define SHORT_CHUNK 64
#define MAX_LIMIT (1 << 24)
#define MAX_PROBE 16
#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

typedef struct {
    uint64_t hash;
    PyObject *chunk; /* bytes, folded; NULL for an empty slot */
    PyObject *terms; /* tuple of str */
} Entry;

typedef struct {
    PyObject_HEAD
    Entry *entries;
    size_t mask;
    Py_ssize_t used;
    Py_ssize_t limit;
    unsigned char fold[128]; /* ASCII byte -> its folded byte, or 0 for a separator */
} ChunkTable;

static int
ChunkTable_init(ChunkTable *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"fold", "limit", NULL};
    Py_buffer fold;
    Py_ssize_t limit;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*n:ChunkTable", names, &fold, &limit))
        return -1;
    if (self->entries != NULL) {
        PyBuffer_Release(&fold);
        PyErr_SetString(PyExc_RuntimeError, "ChunkTable is initialised once");
        return -1;
    }
    if (fold.len < 128 || limit < 1 || limit > MAX_LIMIT) {
        PyBuffer_Release(&fold);
        PyErr_SetString(PyExc_ValueError,
                        "ChunkTable needs a fold table of at least 128 bytes and a limit of 1 to "
                        "16777216 chunks");
        return -1;
    }
    const unsigned char *table = fold.buf;
    for (int c = 0; c < 128; c++) {
        /* Whitespace in the fold table marks a separator, as bytes.split() reads it; NUL marks
           one here, so no byte may be kept as NUL. */
        unsigned char to = table[c];
        if (to == 0) {
            PyBuffer_Release(&fold);
            PyErr_SetString(PyExc_ValueError, "a fold table must not keep a byte as NUL");
            return -1;
        }
        self->fold[c] =
            (to == ' ' || to == '\t' || to == '\n' || to == '\r' || to == '\v' || to == '\f')
                ? 0
                : to;
    }
    PyBuffer_Release(&fold);
    /* At most half full, so that probes stay short. */
    size_t size = 8;
    while (size < 2 * (size_t)limit)
        size <<= 1;
    self->entries = PyMem_Calloc(size, sizeof(Entry));
    if (self->entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->mask = size - 1;
    self->limit = limit;
    self->used = 0;
    return 0;
}

static void
clear_entries(ChunkTable *self)
{
    if (self->entries == NULL)
        return;
    for (size_t i = 0; i <= self->mask; i++) {
        Entry *entry = &self->entries[i];
        Py_CLEAR(entry->chunk);
        Py_CLEAR(entry->terms);
        entry->hash = 0;
    }
    self->used = 0;
}

static void
ChunkTable_dealloc(ChunkTable *self)
{
    clear_entries(self);
    PyMem_Free(self->entries);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The entry holding `folded[0:len]`, or the free slot where it would go, or NULL when the probe
   is longer than MAX_PROBE: such a chunk is looked up in the cache and not remembered, so that
   chunks crafted to collide cost a bounded number of comparisons each. */
static Entry *
find(ChunkTable *self, uint64_t hash, const unsigned char *folded, Py_ssize_t len)
{
    size_t slot = (size_t)hash & self->mask;
    for (int probe = 0; probe < MAX_PROBE; probe++, slot = (slot + 1) & self->mask) {
        Entry *entry = &self->entries[slot];
        if (entry->chunk == NULL ||
            (entry->hash == hash && PyBytes_GET_SIZE(entry->chunk) == len &&
             memcmp(PyBytes_AS_STRING(entry->chunk), folded, (size_t)len) == 0))
            return entry;
    }
    return NULL;
}

/* The cache's terms for `chunk` (a new reference), checked to be a tuple. */
static PyObject *
cached_terms(PyObject *cache, PyObject *chunk)
{
    PyObject *terms = PyObject_GetItem(cache, chunk);
    if (terms != NULL && !PyTuple_Check(terms)) {
        PyErr_Format(PyExc_TypeError, "the term cache gave %.100s for a chunk, not a tuple",
                     Py_TYPE(terms)->tp_name);
        Py_CLEAR(terms);
    }
    return terms;
}

/* The terms of the chunk at the start of `source` (a new reference), from the table or the
   cache; `*len` is set to the chunk's length. The chunk is folded and hashed in one pass. */
static PyObject *
chunk_terms(ChunkTable *self, PyObject *cache, const unsigned char *source, Py_ssize_t left,
            Py_ssize_t *len)
{
    unsigned char folded[SHORT_CHUNK];
    uint64_t hash = FNV_OFFSET;
    Py_ssize_t n = 0;
    for (; n < left && n < SHORT_CHUNK; n++) {
        unsigned char to = self->fold[source[n]];
        if (to == 0)
            break;
        folded[n] = to;
        hash = (hash ^ to) * FNV_PRIME;
    }
    if (n == SHORT_CHUNK && n < left && self->fold[source[n]] != 0) {
        while (n < left && self->fold[source[n]] != 0)
            n++;
        *len = n;
        PyObject *chunk = PyBytes_FromStringAndSize(NULL, n);
        if (chunk == NULL)
            return NULL;
        unsigned char *out = (unsigned char *)PyBytes_AS_STRING(chunk);
        for (Py_ssize_t k = 0; k < n; k++)
            out[k] = self->fold[source[k]];
        PyObject *terms = cached_terms(cache, chunk);
        Py_DECREF(chunk);
        return terms;
    }
    *len = n;
    /* FNV-1a's low bits depend on the bytes' low bits only: mix the high ones in (murmur3). */
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccdULL;
    hash ^= hash >> 33;
    Entry *free_slot = find(self, hash, folded, n);
    if (free_slot != NULL && free_slot->chunk != NULL) {
        Py_INCREF(free_slot->terms);
        return free_slot->terms;
    }
    PyObject *chunk = PyBytes_FromStringAndSize((const char *)folded, n);
    if (chunk == NULL)
        return NULL;
    PyObject *terms = cached_terms(cache, chunk);
    if (terms == NULL || free_slot == NULL || self->used >= self->limit) {
        Py_DECREF(chunk);
        return terms;
    }
    /* The cache ran Python code, which may have changed the table: find the slot again. */
    free_slot = find(self, hash, folded, n);
    if (free_slot == NULL || free_slot->chunk != NULL) {
        Py_DECREF(chunk);
        return terms;
    }
    free_slot->hash = hash;
    free_slot->chunk = chunk; /* the table keeps this reference */
    Py_INCREF(terms);
    free_slot->terms = terms;
    self->used++;
    return terms;
}

PyDoc_STRVAR(read_doc,
             "read(text, cache) -> (parts, every)\n\n"
             "The terms of an ASCII `text`, chunk by chunk (a list of the cache's tuples), and the "
             "set of them, in the order `tokens.read` gives them. `cache[chunk]` gives a chunk's "
             "terms (a tuple) when the table does not hold it.");

static PyObject *
ChunkTable_read(ChunkTable *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "read() takes a text and a term cache");
        return NULL;
    }
    PyObject *text = args[0], *cache = args[1];
    if (self->entries == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "ChunkTable is not initialised");
        return NULL;
    }
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "read() needs a str");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0)
        return NULL;
#endif
    if (!PyUnicode_IS_ASCII(text)) {
        PyErr_SetString(PyExc_ValueError, "read() reads ASCII text only");
        return NULL;
    }
    const unsigned char *source = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    PyObject *parts = PyList_New(0);
    PyObject *every = PySet_New(NULL);
    if (parts == NULL || every == NULL)
        goto failed;
    Py_ssize_t i = 0;
    for (;;) {
        while (i < length && self->fold[source[i]] == 0)
            i++;
        if (i == length)
            break;
        Py_ssize_t len;
        PyObject *terms = chunk_terms(self, cache, source + i, length - i, &len);
        if (terms == NULL)
            goto failed;
        i += len;
        int appended = PyList_Append(parts, terms);
        for (Py_ssize_t t = 0; appended == 0 && t < PyTuple_GET_SIZE(terms); t++)
            appended = PySet_Add(every, PyTuple_GET_ITEM(terms, t));
        Py_DECREF(terms);
        if (appended < 0)
            goto failed;
    }
    PyObject *out = PyTuple_Pack(2, parts, every);
    Py_DECREF(parts);
    Py_DECREF(every);
    return out;
failed:
    Py_XDECREF(parts);
    Py_XDECREF(every);
    return NULL;
}

static PyObject *
ChunkTable_clear(ChunkTable *self, PyObject *Py_UNUSED(ignored))
{
    clear_entries(self);
    Py_RETURN_NONE;
}

static Py_ssize_t
ChunkTable_len(ChunkTable *self)
{
    return self->used;
}

static PyMethodDef ChunkTable_methods[] = {
    {"read", (PyCFunction)(void (*)(void))ChunkTable_read, METH_FASTCALL, read_doc},
    {"clear", (PyCFunction)ChunkTable_clear, METH_NOARGS, "Forget every chunk."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods ChunkTable_as_sequence = {
    .sq_length = (lenfunc)ChunkTable_len,
};

PyDoc_STRVAR(ChunkTable_doc,
             "ChunkTable(fold, limit)\n\n"
             "Chunks of ASCII text and their terms. `fold`: 128 (or more) bytes mapping each ASCII "
             "byte to its folded byte, whitespace for a separator; `limit`: how many chunks it "
             "remembers at most.");

static PyTypeObject ChunkTableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "websearch_mcp.ranking.chunk_table.ChunkTable",
    .tp_basicsize = sizeof(ChunkTable),
    .tp_dealloc = (destructor)ChunkTable_dealloc,
    .tp_as_sequence = &ChunkTable_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = ChunkTable_doc,
    .tp_methods = ChunkTable_methods,
    .tp_init = (initproc)ChunkTable_init,
    .tp_new = PyType_GenericNew,
};

static struct PyModuleDef chunk_table_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "websearch_mcp.ranking.chunk_table",
    .m_doc = "Chunks of ASCII text and their content terms, looked up without a Python object "
             "per chunk.",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit_chunk_table(void)
{
    if (PyType_Ready(&ChunkTableType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&chunk_table_module);
    if (module == NULL)
        return NULL;
    Py_INCREF(&ChunkTableType);
    if (PyModule_AddObject(module, "ChunkTable", (PyObject *)&ChunkTableType) < 0) {
        Py_DECREF(&ChunkTableType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
