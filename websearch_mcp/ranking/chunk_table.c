/* Chunks of ASCII text -> their content terms, with no Python object made per chunk.

`tokens.read` folds a text (lower case, separators to spaces), splits it into chunks and looks
each chunk up in its term cache: in Python that is a bytes object, a hash and a dict look-up per
chunk, a third of `rank()`. A ChunkTable does the same in one pass over the text's bytes: each
chunk is folded and hashed (FNV-1a) at once and found in an open-addressing table of the chunks
seen before. A probe stops after MAX_PROBE slots: chunks crafted to collide are then looked up in
the cache (a dict, with CPython's keyed hash) and not remembered, so that they cost a bounded
number of comparisons each. A chunk not found is looked up in the term cache (`cache[chunk]`, a
bytes key, which reads new chunks and registers compounds) and remembered with its terms and the
parts of its compounds (`cache.parts`), up to `limit` chunks; past that, chunks are still looked
up, only not remembered. With `from_words`, a new chunk made of letter words the table holds
(a URL's slug "boundary-layer-flow", a compound "fts_virtual_table", a word before a full stop
"postgres.") is read from those words here, as `tokens._TermCache` reads it, and stored in the
cache too: asking the cache runs Python code (a regular expression, the stemmer) for each new
one, and new ones come with every search (URLs, titles). `tokens._TermCache` clears its table whenever it starts a new
generation, so the table never holds a chunk, or a compound's parts, that the cache has let go.
The set of a text's terms is then made here too: each chunk's terms and parts are added as the
chunk is read (once per text: each entry remembers the last text that added it), where
`tokens` adds the parts of all the text's compounds at the end (the same set; nothing reads a
set of terms in order).

Built only with the compiled modules (setup.py, WEBSEARCH_MCP_COMPILE=1); without it `tokens`
reads chunks in Python, with the same result. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Longer chunks (rare: long identifiers, base64) skip the table and go to the cache directly. */
#define SHORT_CHUNK 64
/* A text's chunks gathered before its list is made: most texts (a title and a snippet) have
   fewer; longer ones move to the heap. */
#define CHUNKS_ON_STACK 96
#define MAX_LIMIT (1 << 24)
#define MAX_PROBE 16
#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

typedef struct {
    uint64_t hash;
    uint64_t read_in; /* the number of the last text (`read` call) that added its terms */
    PyObject *chunk; /* bytes, folded; NULL for an empty slot */
    PyObject *terms; /* tuple of str */
    PyObject *parts; /* tuple of str, the parts of the compounds among `terms`, or None */
} Entry;

typedef struct {
    PyObject_HEAD
    Entry *entries;
    size_t mask;
    Py_ssize_t used;
    Py_ssize_t limit;
    uint64_t texts; /* `read` calls so far: each text's number */
    int from_words; /* read chunks of known words from them (see above) */
    unsigned char fold[128]; /* ASCII byte -> its folded byte, or 0 for a separator */
} ChunkTable;

static int
ChunkTable_init(ChunkTable *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"fold", "limit", "from_words", NULL};
    Py_buffer fold;
    Py_ssize_t limit;
    int from_words = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*n|$p:ChunkTable", names, &fold, &limit,
                                     &from_words))
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
    self->from_words = from_words;
    self->used = 0;
    self->texts = 0;
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
        Py_CLEAR(entry->parts);
        entry->hash = 0;
        entry->read_in = 0;
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

/* The cache's terms for `chunk` and the parts of those that are compounds (`cache.parts[term]`
   for each term found there, in one tuple, or None when there are none), as new references in
   `*terms` and `*parts`; -1 on an error. */
static int
cached_terms(PyObject *cache, PyObject *chunk, PyObject **terms, PyObject **parts)
{
    *parts = NULL;
    *terms = PyObject_GetItem(cache, chunk);
    if (*terms == NULL)
        return -1;
    if (!PyTuple_Check(*terms)) {
        PyErr_Format(PyExc_TypeError, "the term cache gave %.100s for a chunk, not a tuple",
                     Py_TYPE(*terms)->tp_name);
        goto failed;
    }
    /* Read after the look-up, which registers the chunk's compounds. */
    PyObject *known = PyObject_GetAttrString(cache, "parts");
    if (known == NULL)
        goto failed;
    if (!PyDict_Check(known)) {
        PyErr_SetString(PyExc_TypeError, "the term cache's parts must be a dict");
        Py_DECREF(known);
        goto failed;
    }
    PyObject *found = NULL;
    for (Py_ssize_t t = 0; t < PyTuple_GET_SIZE(*terms); t++) {
        PyObject *of = PyDict_GetItemWithError(known, PyTuple_GET_ITEM(*terms, t));
        if (of == NULL && PyErr_Occurred())
            goto failed_known;
        if (of == NULL)
            continue;
        if (!PyTuple_Check(of)) {
            PyErr_SetString(PyExc_TypeError, "the term cache's parts must be tuples");
            goto failed_known;
        }
        if (found == NULL && (found = PyList_New(0)) == NULL)
            goto failed_known;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(of); k++)
            if (PyList_Append(found, PyTuple_GET_ITEM(of, k)) < 0)
                goto failed_known;
    }
    Py_DECREF(known);
    if (found == NULL) {
        Py_INCREF(Py_None);
        *parts = Py_None;
        return 0;
    }
    *parts = PyList_AsTuple(found);
    Py_DECREF(found);
    if (*parts == NULL)
        goto failed;
    return 0;
failed_known:
    Py_XDECREF(found);
    Py_DECREF(known);
failed:
    Py_CLEAR(*terms);
    return -1;
}

/* FNV-1a's low bits depend on the bytes' low bits only: mix the high ones in (murmur3). */
static uint64_t
mixed(uint64_t hash)
{
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccdULL;
    return hash ^ (hash >> 33);
}

/* `cache.parts[term] = parts` and `cache.compounds.add(term)`, as `tokens._term_of` registers
   a compound; -1 on an error. */
static int
register_compound(PyObject *cache, PyObject *term, PyObject *parts)
{
    PyObject *known = PyObject_GetAttrString(cache, "parts");
    if (known == NULL)
        return -1;
    int status = PyObject_SetItem(known, term, parts);
    Py_DECREF(known);
    if (status < 0)
        return -1;
    PyObject *compounds = PyObject_GetAttrString(cache, "compounds");
    if (compounds == NULL)
        return -1;
    status = PySet_Check(compounds) ? PySet_Add(compounds, term) : -1;
    if (status < 0 && !PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "the term cache's compounds must be a set");
    Py_DECREF(compounds);
    return status;
}

/* The terms of `chunk` (folded: `folded[0:len]`) read from its words, words of the letters a-z
   that the table all holds, the way `tokens._TermCache` reads them:
   - words joined by single hyphens (a URL's slug, "boundary-layer-flow"): the words' terms in
     order;
   - two or more words joined by single underscores ("fts_virtual_table"): one term, the
     compound itself, whose parts are its words' terms (registered in `cache.parts` and
     `cache.compounds` unless there are none);
   - one word: its terms;
   each with any underscores before it and dots after it, which no token holds ("_regex_list",
   "postgres."). Stored in `cache` under `chunk` as well, in `*terms` and `*parts` (new
   references: the parts as `cached_terms` gives them). 1 when it is read so, 0 when the chunk
   is not of these shapes or a word is not in the table (nothing is changed), -1 on an error. */
static int
word_terms(ChunkTable *self, PyObject *cache, PyObject *chunk, const unsigned char *folded,
           Py_ssize_t len, PyObject **terms, PyObject **parts)
{
    Py_ssize_t start = 0, end = len;
    while (start < end && folded[start] == '_')
        start++;
    while (end > start && folded[end - 1] == '.')
        end--;
    Entry *words[SHORT_CHUNK / 2 + 1];
    Py_ssize_t count = 0, total = 0, from = start;
    unsigned char joiner = 0;
    uint64_t hash = FNV_OFFSET;
    for (Py_ssize_t k = start; k <= end; k++) {
        if (k < end && folded[k] >= 'a' && folded[k] <= 'z') {
            hash = (hash ^ folded[k]) * FNV_PRIME;
            continue;
        }
        if (k < end) {
            if ((folded[k] != '-' && folded[k] != '_') || (joiner != 0 && folded[k] != joiner))
                return 0;
            joiner = folded[k];
        }
        if (k == from) /* an empty word: a joiner first, last or doubled */
            return 0;
        Entry *word = find(self, mixed(hash), folded + from, k - from);
        if (word == NULL || word->chunk == NULL || word->parts != Py_None)
            return 0;
        words[count++] = word;
        total += PyTuple_GET_SIZE(word->terms);
        from = k + 1;
        hash = FNV_OFFSET;
    }
    if (count == 0)
        return 0;
    PyObject *read = PyTuple_New(total);
    if (read == NULL)
        return -1;
    for (Py_ssize_t w = 0, at = 0; w < count; w++)
        for (Py_ssize_t t = 0; t < PyTuple_GET_SIZE(words[w]->terms); t++, at++) {
            PyObject *term = PyTuple_GET_ITEM(words[w]->terms, t);
            Py_INCREF(term);
            PyTuple_SET_ITEM(read, at, term);
        }
    PyObject *compound = NULL;
    if (joiner == '_') {
        compound = PyUnicode_FromStringAndSize((const char *)folded + start, end - start);
        *terms = compound == NULL ? NULL : PyTuple_Pack(1, compound);
        if (*terms == NULL || (total > 0 && register_compound(cache, compound, read) < 0))
            goto failed;
        if (total == 0) {
            Py_DECREF(read);
            Py_INCREF(Py_None);
            read = Py_None;
        }
        *parts = read;
    }
    else {
        *terms = read;
        Py_INCREF(Py_None);
        *parts = Py_None; /* words of letters are no compounds */
    }
    if (PyObject_SetItem(cache, chunk, *terms) < 0) {
        Py_CLEAR(*parts);
        read = NULL;
        goto failed;
    }
    Py_XDECREF(compound);
    return 1;
failed:
    Py_XDECREF(read);
    Py_XDECREF(compound);
    Py_CLEAR(*terms);
    return -1;
}

/* The terms of the chunk at the start of `source` and their compounds' parts (as
   `cached_terms` gives them), from the table or the cache; `*len` is set to the chunk's length
   and `*entry` to the table's entry holding it (NULL when the table does not hold it). The chunk
   is folded and hashed in one pass. */
static int
chunk_terms(ChunkTable *self, PyObject *cache, const unsigned char *source, Py_ssize_t left,
            Py_ssize_t *len, PyObject **terms, PyObject **parts, Entry **entry)
{
    *entry = NULL;
    unsigned char folded[SHORT_CHUNK];
    uint64_t hash = FNV_OFFSET;
    Py_ssize_t n = 0, most = left < SHORT_CHUNK ? left : SHORT_CHUNK;
    for (; n < most; n++) {
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
            return -1;
        unsigned char *out = (unsigned char *)PyBytes_AS_STRING(chunk);
        for (Py_ssize_t k = 0; k < n; k++)
            out[k] = self->fold[source[k]];
        int status = cached_terms(cache, chunk, terms, parts);
        Py_DECREF(chunk);
        return status;
    }
    *len = n;
    hash = mixed(hash);
    Entry *slot = find(self, hash, folded, n);
    if (slot != NULL && slot->chunk != NULL) {
        Py_INCREF(slot->terms);
        Py_INCREF(slot->parts);
        *terms = slot->terms;
        *parts = slot->parts;
        *entry = slot;
        return 0;
    }
    PyObject *chunk = PyBytes_FromStringAndSize((const char *)folded, n);
    if (chunk == NULL)
        return -1;
    /* A chunk is read from its words only where it will be remembered: one the table has no
       room for is the cache's to read (it is found there the next times). */
    int status = self->from_words && slot != NULL && self->used < self->limit
                     ? word_terms(self, cache, chunk, folded, n, terms, parts)
                     : 0;
    if (status == 0)
        status = cached_terms(cache, chunk, terms, parts);
    if (status < 0 || slot == NULL || self->used >= self->limit) {
        Py_DECREF(chunk);
        return status < 0 ? -1 : 0;
    }
    /* The cache ran Python code, which may have changed the table: find the slot again. */
    slot = find(self, hash, folded, n);
    if (slot == NULL || slot->chunk != NULL) {
        Py_DECREF(chunk);
        return 0;
    }
    slot->hash = hash;
    slot->chunk = chunk; /* the table keeps this reference */
    Py_INCREF(*terms);
    slot->terms = *terms;
    Py_INCREF(*parts);
    slot->parts = *parts;
    slot->read_in = 0;
    self->used++;
    *entry = slot;
    return 0;
}

/* Each item of the tuple `items` added to `set`; -1 on an error. */
static int
add_all(PyObject *set, PyObject *items)
{
    for (Py_ssize_t t = 0; t < PyTuple_GET_SIZE(items); t++)
        if (PySet_Add(set, PyTuple_GET_ITEM(items, t)) < 0)
            return -1;
    return 0;
}

PyDoc_STRVAR(read_doc,
             "read(text, cache) -> (parts, every) or None\n\n"
             "`tokens.read(text)` of an ASCII `text`: its terms chunk by chunk (a list of the "
             "cache's tuples) and the set of them with their compounds' parts; None for any "
             "other text. `cache` (a dict) gives a chunk's terms (a tuple) when the table does "
             "not hold it, `cache.parts` (a dict) the parts of the compounds among them, and "
             "`cache.make_room()` is called first when it holds `limit` chunks or more.");

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
    if (!PyUnicode_IS_ASCII(text))
        Py_RETURN_NONE; /* the caller's to read */
    /* A full cache starts a new generation (which clears this table) before a text is read,
       never during one: as `tokens.read` asks it to, without a call per text. */
    if (!PyDict_Check(cache)) {
        PyErr_SetString(PyExc_TypeError, "read() needs a term cache that is a dict");
        return NULL;
    }
    if (PyDict_GET_SIZE(cache) >= self->limit) {
        PyObject *done = PyObject_CallMethod(cache, "make_room", NULL);
        if (done == NULL)
            return NULL;
        Py_DECREF(done);
    }
    const unsigned char *source = PyUnicode_1BYTE_DATA(text);
    const uint64_t number = ++self->texts;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    /* The chunks' terms are gathered here and the list is made once at its size: appending
       grew it several times per text. */
    PyObject *local[CHUNKS_ON_STACK], **found = local, *chunks = NULL;
    Py_ssize_t count = 0, room = CHUNKS_ON_STACK;
    PyObject *every = PySet_New(NULL);
    if (every == NULL)
        goto failed;
    /* Neither the set of strings nor the list of the cache's tuples of strings can be part of a
       reference cycle: the collector is told not to walk them. A search keeps one of each per
       result alive, and each young collection walked them all (a set's whole table). */
    PyObject_GC_UnTrack(every);
    Py_ssize_t i = 0;
    for (;;) {
        while (i < length && self->fold[source[i]] == 0)
            i++;
        if (i == length)
            break;
        Py_ssize_t len;
        PyObject *terms, *parts;
        Entry *entry;
        if (chunk_terms(self, cache, source + i, length - i, &len, &terms, &parts, &entry) < 0)
            goto failed;
        i += len;
        if (count == room) {
            PyObject **more = PyMem_Malloc(2 * (size_t)room * sizeof(PyObject *));
            if (more == NULL) {
                Py_DECREF(terms);
                Py_DECREF(parts);
                PyErr_NoMemory();
                goto failed;
            }
            memcpy(more, found, (size_t)count * sizeof(PyObject *));
            if (found != local)
                PyMem_Free(found);
            found = more;
            room *= 2;
        }
        found[count++] = terms; /* the reference `chunk_terms` gave */
        /* A chunk met before in this text (a title's words again in the snippet) added its
           terms then: about one chunk in five. */
        int status = 0;
        if (entry == NULL || entry->read_in != number) {
            if (entry != NULL)
                entry->read_in = number;
            status = add_all(every, terms);
            if (status == 0 && parts != Py_None)
                status = add_all(every, parts);
        }
        Py_DECREF(parts);
        if (status < 0)
            goto failed;
    }
    chunks = PyList_New(count);
    if (chunks == NULL)
        goto failed;
    PyObject_GC_UnTrack(chunks);
    for (Py_ssize_t k = 0; k < count; k++)
        PyList_SET_ITEM(chunks, k, found[k]);
    count = 0; /* the list holds them now */
    if (found != local)
        PyMem_Free(found);
    PyObject *out = PyTuple_Pack(2, chunks, every);
    Py_DECREF(chunks);
    Py_DECREF(every);
    return out;
failed:
    for (Py_ssize_t k = 0; k < count; k++)
        Py_DECREF(found[k]);
    if (found != local)
        PyMem_Free(found);
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
             "ChunkTable(fold, limit, *, from_words=False)\n\n"
             "Chunks of ASCII text and their terms. `fold`: 128 (or more) bytes mapping each ASCII "
             "byte to its folded byte, whitespace for a separator; `limit`: how many chunks it "
             "remembers at most; `from_words`: a chunk of words of a-z it holds, joined by "
             "hyphens or underscores, after underscores or before dots, is read from them as "
             "`tokens._TermCache` reads it, and stored in the cache without asking it.");

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
