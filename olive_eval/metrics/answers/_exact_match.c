/* exact_match in C: the optional compiled form of olive_eval.metrics.answers.kernels.exact_match_scores.
 *
 * matches(predictions, references[, offsets[, normalize]]) -> bytearray of float64 (1.0 or 0.0 per example),
 * or None.
 *
 *   predictions  list of str
 *   references   without offsets (None): list with, per example, a '|'-joined str (escapes "\|" and "\\", as
 *                references.split_alternatives reads them) or a list/tuple of str (at least one);
 *                with offsets: the flat list of all alternatives (Answers.texts)
 *   offsets      int64 buffer of n + 1 entries: example i owns references[offsets[i]:offsets[i + 1]]
 *   normalize    true (the default): Olive's normalization below; false: the strings are compared as they are
 *                (exact_match's normalizer "none"); a joined reference is still split at '|' and unescaped
 *
 * An answer is normalized as Olive does, " ".join(s.strip().lower().split()): str.lower for non-ASCII strings
 * (ASCII ones are lowercased while read), and Python's own whitespace test (Py_UNICODE_ISSPACE, what str.split()
 * uses). A joined non-ASCII reference is lowercased whole before it is split: '|' and '\' are neither cased nor
 * case-ignorable, so they end a final-sigma context exactly as the end of a string does.
 *
 * None means the input needs the checked Python path (a value that is not a str, a mix of forms, an empty list of
 * answers, bad offsets): that path raises the error that names the example. The caller checks the lengths.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* One answer after normalization, as code points. */
typedef struct {
    Py_UCS4 *data;
    Py_ssize_t size;
    Py_ssize_t capacity;
} Buffer;

static int reserve(Buffer *b, Py_ssize_t n) {
    if (n <= b->capacity) return 0;
    Py_ssize_t capacity = n > 2 * b->capacity ? n : 2 * b->capacity;
    Py_UCS4 *data = PyMem_Realloc(b->data, (size_t)capacity * sizeof(Py_UCS4));
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->capacity = capacity;
    return 0;
}

static PyObject *str_lower; /* str.lower itself: a str subclass's own lower() could run code that edits the lists */

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t length;
    int ascii; /* ASCII text to lowercase while it is read (never set when not folding) */
    PyObject *lowered;
} Source;

/* A str to read: lowercased when fold is set (ASCII directly, any other through str.lower()), else as it is. */
static int open_source(PyObject *s, Source *src, int fold) {
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0) return -1;
#endif
    src->lowered = NULL;
    src->ascii = fold && PyUnicode_IS_ASCII(s);
    if (fold && !src->ascii) {
        src->lowered = PyObject_CallOneArg(str_lower, s);
        if (src->lowered == NULL) return -1;
        s = src->lowered;
    }
    src->kind = PyUnicode_KIND(s);
    src->data = PyUnicode_DATA(s);
    src->length = PyUnicode_GET_LENGTH(s);
    return 0;
}

static inline Py_UCS4 read_char(const Source *src, Py_ssize_t i) {
    Py_UCS4 c = PyUnicode_READ(src->kind, src->data, i);
    return (src->ascii && c - 'A' < 26u) ? c + 32 : c;
}

/* Append c to the answer being read; when folding, whitespace runs become one space, none at either end. */
static inline void put(Buffer *b, int *space, Py_UCS4 c, int fold) {
    if (!fold) {
        b->data[b->size++] = c;
        return;
    }
    if (Py_UNICODE_ISSPACE(c)) {
        *space = b->size > 0;
        return;
    }
    if (*space) {
        b->data[b->size++] = ' ';
        *space = 0;
    }
    b->data[b->size++] = c;
}

static inline int same(const Buffer *a, const Buffer *b) {
    return a->size == b->size && memcmp(a->data, b->data, (size_t)a->size * sizeof(Py_UCS4)) == 0;
}

/* Read a whole str into b, normalized when folding (the output is never longer than the lowercased input). */
static int normalize(PyObject *s, Buffer *b, int fold) {
    Source src;
    if (open_source(s, &src, fold) < 0) return -1;
    int space = 0;
    b->size = 0;
    if (reserve(b, src.length) == 0)
        for (Py_ssize_t i = 0; i < src.length; i++) put(b, &space, read_char(&src, i), fold);
    Py_XDECREF(src.lowered);
    return PyErr_Occurred() ? -1 : 0;
}

/* Does the normalized prediction equal one of the alternatives of a '|'-joined reference? */
static int match_joined(const Buffer *prediction, PyObject *reference, Buffer *b, int fold) {
    Source src;
    if (open_source(reference, &src, fold) < 0) return -1;
    int space = 0, found = 0;
    b->size = 0;
    if (reserve(b, src.length) < 0) {
        Py_XDECREF(src.lowered);
        return -1;
    }
    for (Py_ssize_t i = 0; i < src.length && !found; i++) {
        Py_UCS4 c = read_char(&src, i);
        if (c == '\\' && i + 1 < src.length) {
            Py_UCS4 next = read_char(&src, i + 1);
            if (next == '|' || next == '\\') {
                put(b, &space, next, fold);
                i++;
                continue;
            }
        }
        if (c == '|') {
            found = same(prediction, b);
            b->size = 0;
            space = 0;
        } else {
            put(b, &space, c, fold);
        }
    }
    found = found || same(prediction, b);
    Py_XDECREF(src.lowered);
    return found;
}

/* Does the normalized prediction equal one of `items` (all str)? -2: an item is not a str. */
static int match_items(const Buffer *prediction, PyObject *const *items, Py_ssize_t count, Buffer *b, int fold) {
    int found = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        if (!PyUnicode_Check(items[k])) return -2;
        if (found) continue; /* the rest are still checked for their type */
        if (normalize(items[k], b, fold) < 0) return -1;
        found = same(prediction, b);
    }
    return found;
}

static int read_offsets(PyObject *object, Py_ssize_t n, Py_ssize_t n_texts, int64_t **offsets, Py_buffer *view) {
    if (PyObject_GetBuffer(object, view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    *offsets = (int64_t *)view->buf;
    int ok = view->len == (Py_ssize_t)((n + 1) * sizeof(int64_t)) && (*offsets)[0] == 0 && (*offsets)[n] == n_texts;
    for (Py_ssize_t i = 0; ok && i < n; i++) ok = (*offsets)[i] < (*offsets)[i + 1];
    return ok;
}

static PyObject *matches(PyObject *self, PyObject *args) {
    PyObject *predictions, *references, *offsets_object = Py_None;
    int fold = 1;
    if (!PyArg_ParseTuple(args, "O!O!|Op", &PyList_Type, &predictions, &PyList_Type, &references, &offsets_object,
                          &fold))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(predictions);
    int64_t *offsets = NULL;
    Py_buffer view = {0};
    int flat = offsets_object != Py_None;
    if (flat) {
        int ok = read_offsets(offsets_object, n, PyList_GET_SIZE(references), &offsets, &view);
        if (ok <= 0) {
            if (ok == 0) PyBuffer_Release(&view);
            return ok < 0 ? NULL : Py_NewRef(Py_None);
        }
    } else if (PyList_GET_SIZE(references) != n) {
        return Py_NewRef(Py_None);
    }
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (out == NULL) goto fail;
    double *scores = (double *)PyByteArray_AS_STRING(out);
    int joined = !flat && n > 0 && PyUnicode_Check(PyList_GET_ITEM(references, 0));
    Buffer prediction = {0}, alternative = {0};
    int status = 0; /* 0: fine, -1: a Python error, -2: needs the checked path */
    for (Py_ssize_t i = 0; i < n && status == 0; i++) {
        PyObject *p = PyList_GET_ITEM(predictions, i);
        if (!PyUnicode_Check(p)) {
            status = -2;
            break;
        }
        if (normalize(p, &prediction, fold) < 0) {
            status = -1;
            break;
        }
        int found;
        if (flat) {
            found = match_items(&prediction, PySequence_Fast_ITEMS(references) + offsets[i],
                                (Py_ssize_t)(offsets[i + 1] - offsets[i]), &alternative, fold);
        } else {
            PyObject *r = PyList_GET_ITEM(references, i);
            if (joined) {
                found = PyUnicode_Check(r) ? match_joined(&prediction, r, &alternative, fold) : -2;
            } else if ((PyList_Check(r) || PyTuple_Check(r)) && PySequence_Fast_GET_SIZE(r) > 0) {
                found = match_items(&prediction, PySequence_Fast_ITEMS(r), PySequence_Fast_GET_SIZE(r),
                                    &alternative, fold);
            } else {
                found = -2; /* a str among lists, an empty list, or neither */
            }
        }
        if (found < 0) status = found;
        else scores[i] = found ? 1.0 : 0.0;
    }
    PyMem_Free(prediction.data);
    PyMem_Free(alternative.data);
    if (flat) PyBuffer_Release(&view);
    if (status == 0) return out;
    Py_DECREF(out);
    return status == -1 ? NULL : Py_NewRef(Py_None);
fail:
    if (flat) PyBuffer_Release(&view);
    return NULL;
}

static PyMethodDef methods[] = {
    {"matches", matches, METH_VARARGS,
     "matches(predictions, references[, offsets[, normalize]]) -> bytearray of float64 per example, or None (see the "
     "source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_exact_match",
                                    "exact_match over Olive-normalized (or verbatim) answers, in C.", -1, methods};

PyMODINIT_FUNC PyInit__exact_match(void) {
    str_lower = PyObject_GetAttrString((PyObject *)&PyUnicode_Type, "lower");
    return str_lower == NULL ? NULL : PyModule_Create(&module);
}
