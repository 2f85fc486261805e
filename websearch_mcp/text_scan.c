/* Single passes over the text every parser and every merge reads, where Python needs several.

- `single_spaced(text)`: whether `" ".join(text.split()) == text`, i.e. whether
  `engines.text.collapse_spaces` has nothing to do. In Python that is ten substring searches per text
  (or `isprintable()`); here one look at each character, with CPython's own test of whitespace
  (`Py_UNICODE_ISSPACE`, what `str.split()` breaks on).
  Latin-1 text (nearly all of it) is read eight bytes at a time.
- `simple_url(text)` and `plain_link(text)`: the groups of `urls._SIMPLE_URL.fullmatch(text)`
  and of `engines.common._PLAIN_LINK.fullmatch(text)`, the shapes of most URLs engines return,
  or None. Neither pattern's character classes hold the character that ends the part before
  them, so a match is the longest run of each class in turn: decided in one pass, where the
  regular expression engine takes ten to twenty times as long.
- `canonical_url(text, cls, tracking, prefixes)`: `urls.canonicalize(text)` of a URL of
  `_SIMPLE_URL`'s shape, most of the links engines return, made in one pass (as an instance of
  `cls`, `urls.CanonicalURL`): its query's parameters sorted, those named in `tracking` or
  starting with one of `prefixes` (lower-cased) left out; None for every other text, which
  Python reads.

Built only with the compiled modules (setup.py, WEBSEARCH_MCP_COMPILE=1); without it the callers
do the same in Python, with the same result. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* The characters of the patterns' classes: `_SIMPLE_URL`'s host [a-z0-9.-], path
   [A-Za-z0-9/:@!$&'()*+,;=\-._~] and query [A-Za-z0-9._~=&-], and `_PLAIN_LINK`'s host
   [A-Za-z0-9.-]. */
#define HOST 1
#define PATH 2
#define QUERY 4
#define LINK_HOST 8

static unsigned char classes[128];
/* For each Latin-1 character: 1 for " ", 2 for other whitespace, 0 for the rest. */
static unsigned char latin1_space[256];

static void
fill_classes(void)
{
    for (int c = 0; c < 128; c++) {
        int lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z', digit = c >= '0' && c <= '9';
        if (lower || digit || c == '.' || c == '-')
            classes[c] |= HOST;
        if (lower || upper || digit || strchr("/:@!$&'()*+,;=-._~", c) != NULL)
            classes[c] |= PATH;
        if (lower || upper || digit || strchr("._~=&-", c) != NULL)
            classes[c] |= QUERY;
        if (lower || upper || digit || c == '.' || c == '-')
            classes[c] |= LINK_HOST;
    }
    classes[0] = 0; /* strchr finds the terminating NUL */
    for (int c = 0; c < 256; c++)
        latin1_space[c] = c == ' ' ? 1 : Py_UNICODE_ISSPACE(c) ? 2 : 0;
}

static Py_ssize_t
run_of(const Py_UCS1 *data, Py_ssize_t at, Py_ssize_t end, unsigned char class)
{
    while (at < end && (classes[data[at]] & class))
        at++;
    return at;
}

/* 0 when `text` is a str, ready to read; -1 with a TypeError naming `function` otherwise. */
static int
ready_str(PyObject *text, const char *function)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "%s() wants a str, not %.100s", function,
                     Py_TYPE(text)->tp_name);
        return -1;
    }
    return PyUnicode_READY(text);
}

/* Whether the ASCII `prefix` stands in `text` (`kind`, `data`, `end` characters) at `at`. */
static int
has_at(int kind, const void *data, Py_ssize_t end, Py_ssize_t at, const char *prefix)
{
    for (; *prefix; prefix++, at++)
        if (at >= end || PyUnicode_READ(kind, data, at) != (Py_UCS4)(unsigned char)*prefix)
            return 0;
    return 1;
}

/* Where the host starts after "http://" or "https://" (the patterns' `https?://`); 0 when the
   text begins with neither. */
static Py_ssize_t
host_start(int kind, const void *data, Py_ssize_t end)
{
    if (has_at(kind, data, end, 0, "https://"))
        return 8;
    return has_at(kind, data, end, 0, "http://") ? 7 : 0;
}

PyDoc_STRVAR(simple_url_doc,
             "simple_url(text, /)\n--\n\n"
             "(host, path or None, query or None): the groups of "
             "`https?://([a-z0-9.-]+)(/[A-Za-z0-9/:@!$&'()*+,;=\\-._~]*)?"
             "(?:\\?([A-Za-z0-9._~=&-]*))?` matching all of `text`; None when it does not.");

static PyObject *
simple_url(PyObject *module, PyObject *text)
{
    if (ready_str(text, "simple_url") < 0)
        return NULL;
    if (!PyUnicode_IS_ASCII(text))
        Py_RETURN_NONE;
    const Py_UCS1 *data = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t end = PyUnicode_GET_LENGTH(text);
    Py_ssize_t host_from = host_start(PyUnicode_1BYTE_KIND, data, end);
    if (host_from == 0)
        Py_RETURN_NONE;
    Py_ssize_t host_end = run_of(data, host_from, end, HOST);
    if (host_end == host_from)
        Py_RETURN_NONE;
    Py_ssize_t path_end = host_end, query_start = -1, query_end = -1;
    if (path_end < end && data[path_end] == '/')
        path_end = run_of(data, path_end + 1, end, PATH);
    if (path_end < end && data[path_end] == '?') {
        query_start = path_end + 1;
        query_end = run_of(data, query_start, end, QUERY);
        if (query_end != end)
            Py_RETURN_NONE;
    }
    else if (path_end != end)
        Py_RETURN_NONE;
    PyObject *host = PyUnicode_Substring(text, host_from, host_end);
    PyObject *path = path_end > host_end ? PyUnicode_Substring(text, host_end, path_end)
                                         : Py_NewRef(Py_None);
    PyObject *query = query_start >= 0 ? PyUnicode_Substring(text, query_start, query_end)
                                       : Py_NewRef(Py_None);
    PyObject *groups = NULL;
    if (host != NULL && path != NULL && query != NULL)
        groups = PyTuple_Pack(3, host, path, query);
    Py_XDECREF(host);
    Py_XDECREF(path);
    Py_XDECREF(query);
    return groups;
}

/* Whether `data[from:to]` begins with the ASCII `prefix`. */
static int
starts_with(const Py_UCS1 *data, Py_ssize_t from, Py_ssize_t to, const char *prefix)
{
    size_t n = strlen(prefix);
    return to - from >= (Py_ssize_t)n && memcmp(data + from, prefix, n) == 0;
}

static Py_ssize_t
dots(const Py_UCS1 *data, Py_ssize_t from, Py_ssize_t to)
{
    Py_ssize_t count = 0;
    for (; from < to; from++)
        count += data[from] == '.';
    return count;
}

/* A str of the ASCII `data[from:to]`. */
static PyObject *
ascii_str(const Py_UCS1 *data, Py_ssize_t from, Py_ssize_t to)
{
    PyObject *out = PyUnicode_New(to - from, 127);
    if (out != NULL)
        memcpy(PyUnicode_1BYTE_DATA(out), data + from, (size_t)(to - from));
    return out;
}

/* A query parameter: its name and value as spans of the text. */
typedef struct {
    Py_ssize_t name, name_end, value, value_end;
} Param;

#define MOST_PARAMS 64

/* Whether `a` sorts before `b` as Python orders the tuples (name, value) of ASCII str. */
static int
param_before(const Py_UCS1 *data, const Param *a, const Param *b)
{
    Py_ssize_t la = a->name_end - a->name, lb = b->name_end - b->name;
    int order = memcmp(data + a->name, data + b->name, (size_t)(la < lb ? la : lb));
    if (order != 0 || la != lb)
        return order != 0 ? order < 0 : la < lb;
    la = a->value_end - a->value;
    lb = b->value_end - b->value;
    order = memcmp(data + a->value, data + b->value, (size_t)(la < lb ? la : lb));
    return order != 0 ? order < 0 : la < lb;
}

/* `urls._is_tracking` of the ASCII name `data[from:to]`: 1, 0, or -1 on an error. */
static int
is_tracking(const Py_UCS1 *data, Py_ssize_t from, Py_ssize_t to, PyObject *tracking,
            PyObject *prefixes)
{
    PyObject *lowered = PyUnicode_New(to - from, 127);
    if (lowered == NULL)
        return -1;
    Py_UCS1 *into = PyUnicode_1BYTE_DATA(lowered);
    for (Py_ssize_t k = from; k < to; k++)
        into[k - from] = (Py_UCS1)Py_TOLOWER(data[k]);
    int found = PySet_Contains(tracking, lowered);
    for (Py_ssize_t p = 0; found == 0 && p < PyTuple_GET_SIZE(prefixes); p++) {
        PyObject *prefix = PyTuple_GET_ITEM(prefixes, p);
        Py_ssize_t n = PyUnicode_GET_LENGTH(prefix);
        found = n <= to - from && memcmp(into, PyUnicode_1BYTE_DATA(prefix), (size_t)n) == 0;
    }
    Py_DECREF(lowered);
    return found;
}

/* The kept parameters of the query `data[from:to]` (characters of `_SIMPLE_URL`'s query
   class) in `params`, sorted, as `urls._plain_query` keeps them; their count, -1 with an
   error set, or -2 when Python must read the query (a value holding "=", or too many). */
static Py_ssize_t
query_params(const Py_UCS1 *data, Py_ssize_t from, Py_ssize_t to, PyObject *tracking,
             PyObject *prefixes, Param *params)
{
    Py_ssize_t count = 0;
    for (Py_ssize_t piece = from; piece <= to;) {
        Py_ssize_t piece_end = piece;
        while (piece_end < to && data[piece_end] != '&')
            piece_end++;
        if (piece_end > piece) {
            Py_ssize_t equals = piece;
            while (equals < piece_end && data[equals] != '=')
                equals++;
            Param param = {piece, equals, equals < piece_end ? equals + 1 : piece_end, piece_end};
            for (Py_ssize_t k = param.value; k < piece_end; k++)
                if (data[k] == '=')
                    return -2;
            int tracked = is_tracking(data, param.name, param.name_end, tracking, prefixes);
            if (tracked < 0)
                return -1;
            if (!tracked) {
                if (count == MOST_PARAMS)
                    return -2;
                Py_ssize_t at = count++;
                for (; at > 0 && param_before(data, &param, &params[at - 1]); at--)
                    params[at] = params[at - 1];
                params[at] = param;
            }
        }
        piece = piece_end + 1;
    }
    return count;
}

PyDoc_STRVAR(canonical_url_doc,
             "canonical_url(text, cls, tracking, prefixes, /)\n--\n\n"
             "`cls((key, host, path))`, as `urls.canonicalize(text)` gives it, for a text that "
             "is, once stripped of whitespace, an ASCII URL of `urls._SIMPLE_URL`'s shape; "
             "query parameters whose lower-cased name is in the set `tracking` or starts with "
             "one of the tuple of ASCII str `prefixes` are left out, the rest sorted. None for "
             "any other text, and for a query value holding \"=\".");

static PyObject *
canonical_url(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "canonical_url() takes a text, a tuple type, a set and a tuple");
        return NULL;
    }
    PyObject *text = args[0], *cls = args[1], *tracking = args[2], *prefixes = args[3];
    if (ready_str(text, "canonical_url") < 0)
        return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "canonical_url() needs a subclass of tuple");
        return NULL;
    }
    if (!PyAnySet_Check(tracking) || !PyTuple_Check(prefixes)) {
        PyErr_SetString(PyExc_TypeError,
                        "canonical_url() needs a set of tracking names and a tuple of prefixes");
        return NULL;
    }
    for (Py_ssize_t p = 0; p < PyTuple_GET_SIZE(prefixes); p++) {
        PyObject *prefix = PyTuple_GET_ITEM(prefixes, p);
        if (!PyUnicode_Check(prefix) || PyUnicode_READY(prefix) < 0 ||
            !PyUnicode_IS_ASCII(prefix)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "canonical_url() needs prefixes of ASCII str");
            return NULL;
        }
    }
    if (!PyUnicode_IS_ASCII(text))
        Py_RETURN_NONE;
    const Py_UCS1 *data = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t start = 0, end = PyUnicode_GET_LENGTH(text);
    /* str.strip(): no pattern character is whitespace. */
    while (start < end && Py_UNICODE_ISSPACE(data[start]))
        start++;
    while (end > start && Py_UNICODE_ISSPACE(data[end - 1]))
        end--;
    Py_ssize_t scheme = host_start(PyUnicode_1BYTE_KIND, data + start, end - start);
    if (scheme == 0)
        Py_RETURN_NONE;
    Py_ssize_t host_from = start + scheme;
    Py_ssize_t host_end = run_of(data, host_from, end, HOST);
    Py_ssize_t path_end = host_end;
    if (path_end < end && data[path_end] == '/')
        path_end = run_of(data, path_end + 1, end, PATH);
    Py_ssize_t query_from = end; /* no query, or an empty one */
    if (path_end != end) {
        if (data[path_end] != '?')
            Py_RETURN_NONE;
        query_from = path_end + 1;
        if (run_of(data, query_from, end, QUERY) != end)
            Py_RETURN_NONE;
    }
    if (host_end == host_from)
        Py_RETURN_NONE;
    Param params[MOST_PARAMS];
    Py_ssize_t kept = query_params(data, query_from, end, tracking, prefixes, params);
    if (kept == -1)
        return NULL;
    if (kept == -2)
        Py_RETURN_NONE;
    /* `urls._clean_host`: no dots after, no "www." or "m." before while two dots remain. */
    Py_ssize_t host_to = host_end;
    while (host_to > host_from && data[host_to - 1] == '.')
        host_to--;
    for (int changed = 1; changed;) {
        changed = 0;
        if (starts_with(data, host_from, host_to, "www.") && dots(data, host_from, host_to) > 1) {
            host_from += 4;
            changed = 1;
        }
        if (starts_with(data, host_from, host_to, "m.") && dots(data, host_from, host_to) > 1) {
            host_from += 2;
            changed = 1;
        }
    }
    if (host_to == host_from)
        Py_RETURN_NONE;
    Py_ssize_t path_to = path_end;
    while (path_to > host_end && data[path_to - 1] == '/')
        path_to--;
    Py_ssize_t host_len = host_to - host_from, path_len = path_to - host_end;
    /* "?" and "name=value" joined by "&" */
    Py_ssize_t query_len = 0;
    for (Py_ssize_t k = 0; k < kept; k++)
        query_len += 1 + (params[k].name_end - params[k].name) + 1 +
                     (params[k].value_end - params[k].value);
    PyObject *key = PyUnicode_New(8 + host_len + path_len + query_len, 127);
    PyObject *host = ascii_str(data, host_from, host_to);
    PyObject *path = ascii_str(data, host_end, path_to);
    PyObject *out = NULL;
    if (key != NULL && host != NULL && path != NULL) {
        Py_UCS1 *into = PyUnicode_1BYTE_DATA(key);
        memcpy(into, "https://", 8);
        memcpy(into + 8, data + host_from, (size_t)host_len);
        memcpy(into + 8 + host_len, data + host_end, (size_t)path_len);
        into += 8 + host_len + path_len;
        for (Py_ssize_t k = 0; k < kept; k++) {
            Py_ssize_t name_len = params[k].name_end - params[k].name;
            Py_ssize_t value_len = params[k].value_end - params[k].value;
            *into++ = k == 0 ? '?' : '&';
            memcpy(into, data + params[k].name, (size_t)name_len);
            into += name_len;
            *into++ = '=';
            memcpy(into, data + params[k].value, (size_t)value_len);
            into += value_len;
        }
        out = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 3);
    }
    if (out == NULL) {
        Py_XDECREF(key);
        Py_XDECREF(host);
        Py_XDECREF(path);
        return NULL;
    }
    PyTuple_SET_ITEM(out, 0, key);
    PyTuple_SET_ITEM(out, 1, host);
    PyTuple_SET_ITEM(out, 2, path);
    return out;
}

PyDoc_STRVAR(plain_link_doc,
             "plain_link(text, /)\n--\n\n"
             "(host, the rest or None): the groups of "
             "`https?://([A-Za-z0-9.-]*)([/?#][^\\t\\r\\n]*)?` matching all of `text`; None "
             "when it does not.");

static PyObject *
plain_link(PyObject *module, PyObject *text)
{
    if (ready_str(text, "plain_link") < 0)
        return NULL;
    Py_ssize_t end = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t host_from = host_start(kind, data, end);
    if (host_from == 0)
        Py_RETURN_NONE;
    Py_ssize_t host_end = host_from;
    while (host_end < end) {
        Py_UCS4 c = PyUnicode_READ(kind, data, host_end);
        if (c >= 128 || !(classes[c] & LINK_HOST))
            break;
        host_end++;
    }
    PyObject *rest = Py_None;
    if (host_end < end) {
        Py_UCS4 c = PyUnicode_READ(kind, data, host_end);
        if (c != '/' && c != '?' && c != '#')
            Py_RETURN_NONE;
        for (Py_ssize_t i = host_end + 1; i < end; i++) {
            c = PyUnicode_READ(kind, data, i);
            if (c == '\t' || c == '\r' || c == '\n')
                Py_RETURN_NONE;
        }
        rest = PyUnicode_Substring(text, host_end, end);
        if (rest == NULL)
            return NULL;
    }
    else
        Py_INCREF(rest);
    PyObject *host = PyUnicode_Substring(text, host_from, host_end);
    PyObject *groups = host == NULL ? NULL : PyTuple_Pack(2, host, rest);
    Py_XDECREF(host);
    Py_DECREF(rest);
    return groups;
}

PyDoc_STRVAR(single_spaced_doc,
             "single_spaced(text, /)\n--\n\n"
             "Whether `\" \".join(text.split()) == text`: no whitespace but single spaces "
             "between other characters.");

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
#define LOW7 0x7F7F7F7F7F7F7F7FULL

static int
latin1_single_spaced(const Py_UCS1 *data, Py_ssize_t length)
{
    int after_space = 1; /* a space first is a space to trim */
    Py_ssize_t i = 0;
    while (i < length) {
#if PY_LITTLE_ENDIAN
        if (i + 8 <= length) {
            uint64_t word;
            memcpy(&word, data + i, 8);
            /* No byte below 0x20 or from 0x80 up, where the other whitespace is: only spaces to
               look at. 0x80 marks each byte that is a space, exactly (no carries between bytes). */
            if (!((((word - ONES * 0x20) & ~word) | word) & HIGHS)) {
                uint64_t apart = word ^ (ONES * ' ');
                uint64_t spaces = ~(((apart & LOW7) + LOW7) | apart | LOW7);
                if ((spaces & (spaces << 8)) || (after_space && (spaces & 0x80)))
                    return 0;
                after_space = (int)(spaces >> 63);
                i += 8;
                continue;
            }
        }
#endif
        unsigned char space = latin1_space[data[i]];
        if (space == 2 || (space == 1 && after_space))
            return 0;
        after_space = space == 1;
        i++;
    }
    return length == 0 || !after_space; /* a space last is a space to trim */
}

static PyObject *
single_spaced(PyObject *module, PyObject *text)
{
    if (ready_str(text, "single_spaced") < 0)
        return NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    if (kind == PyUnicode_1BYTE_KIND)
        return PyBool_FromLong(latin1_single_spaced(PyUnicode_1BYTE_DATA(text), length));
    const void *data = PyUnicode_DATA(text);
    int after_space = 1; /* a space first is a space to trim */
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == ' ') {
            if (after_space)
                Py_RETURN_FALSE;
            after_space = 1;
        }
        else if (Py_UNICODE_ISSPACE(c))
            Py_RETURN_FALSE;
        else
            after_space = 0;
    }
    /* A space last is a space to trim (an empty text has none). */
    return PyBool_FromLong(length == 0 || !after_space);
}

static PyMethodDef text_scan_methods[] = {
    {"plain_link", plain_link, METH_O, plain_link_doc},
    {"simple_url", simple_url, METH_O, simple_url_doc},
    {"canonical_url", (PyCFunction)(void (*)(void))canonical_url, METH_FASTCALL,
     canonical_url_doc},
    {"single_spaced", single_spaced, METH_O, single_spaced_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef text_scan_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "websearch_mcp.text_scan",
    .m_doc = "Single passes over engines' text and URLs, where Python needs several.",
    .m_size = -1,
    .m_methods = text_scan_methods,
};

PyMODINIT_FUNC
PyInit_text_scan(void)
{
    fill_classes();
    return PyModule_Create(&text_scan_module);
}
