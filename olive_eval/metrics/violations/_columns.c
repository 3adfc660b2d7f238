/* Violation dicts read into flat columns in C: the optional compiled form of inputs._fast.
 *
 *   columns(documents, texts, fields) -> (offsets, starts, ends, [strings per field]) or None
 *
 * documents: a sequence of lists of violation dicts, one list per document; texts: a sequence of str, one per
 * document; fields: a tuple of str keys. offsets ([documents + 1]), starts and ends ([violations]) are bytearrays
 * of int64 (np.frombuffer reads them); each field's strings are one list. Only the plain form is read: lists of
 * exact dicts whose "span" is an exact list or tuple of two exact ints with 0 <= start <= end <= len(text) and whose
 * fields are exact str. Anything else returns None, and the Python side takes its own path (which names the
 * problem). Reading a dict here is two or three hash lookups and no Python objects made; the Python form builds a
 * list per key and a numpy array of the spans' lists, several times the cost.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static int span_of(PyObject *span, Py_ssize_t length, int64_t *start, int64_t *end) {
    if (!(PyList_CheckExact(span) || PyTuple_CheckExact(span)) || PySequence_Fast_GET_SIZE(span) != 2) return 0;
    PyObject *a = PySequence_Fast_GET_ITEM(span, 0), *b = PySequence_Fast_GET_ITEM(span, 1);
    if (!PyLong_CheckExact(a) || !PyLong_CheckExact(b)) return 0;
    int overflow = 0;
    long long s = PyLong_AsLongLongAndOverflow(a, &overflow);
    if (overflow) return 0;
    long long e = PyLong_AsLongLongAndOverflow(b, &overflow);
    if (overflow) return 0;
    if (!(0 <= s && s <= e && e <= (long long)length)) return 0;
    *start = s;
    *end = e;
    return 1;
}

static PyObject *columns(PyObject *self, PyObject *args) {
    PyObject *documents_obj, *texts_obj, *fields;
    if (!PyArg_ParseTuple(args, "OOO!", &documents_obj, &texts_obj, &PyTuple_Type, &fields)) return NULL;
    Py_ssize_t n_fields = PyTuple_GET_SIZE(fields);
    for (Py_ssize_t f = 0; f < n_fields; f++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(fields, f))) {
            PyErr_SetString(PyExc_TypeError, "fields must be str");
            return NULL;
        }
    PyObject *documents = PySequence_Fast(documents_obj, "documents must be a sequence");
    if (documents == NULL) return NULL;
    PyObject *texts = PySequence_Fast(texts_obj, "texts must be a sequence");
    if (texts == NULL) {
        Py_DECREF(documents);
        return NULL;
    }
    PyObject *result = NULL, *offsets = NULL, *starts = NULL, *ends = NULL, *lists = NULL;
    PyObject *span_key = PyUnicode_InternFromString("span");
    if (span_key == NULL) goto done;
    Py_ssize_t n_docs = PySequence_Fast_GET_SIZE(documents), total = 0;
    if (PySequence_Fast_GET_SIZE(texts) != n_docs) goto plain;
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        PyObject *doc = PySequence_Fast_GET_ITEM(documents, d);
        if (!PyList_CheckExact(doc) || !PyUnicode_CheckExact(PySequence_Fast_GET_ITEM(texts, d))) goto plain;
        total += PyList_GET_SIZE(doc);
    }
    offsets = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int64_t) * (n_docs + 1));
    starts = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int64_t) * total);
    ends = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int64_t) * total);
    lists = PyList_New(n_fields);
    if (offsets == NULL || starts == NULL || ends == NULL || lists == NULL) goto done;
    for (Py_ssize_t f = 0; f < n_fields; f++) {
        PyObject *list = PyList_New(total);
        if (list == NULL) goto done;
        PyList_SET_ITEM(lists, f, list);
    }
    int64_t *off = (int64_t *)PyByteArray_AS_STRING(offsets);
    int64_t *st = (int64_t *)PyByteArray_AS_STRING(starts), *en = (int64_t *)PyByteArray_AS_STRING(ends);
    Py_ssize_t row = 0;
    off[0] = 0;
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        PyObject *doc = PySequence_Fast_GET_ITEM(documents, d);
        Py_ssize_t length = PyUnicode_GET_LENGTH(PySequence_Fast_GET_ITEM(texts, d));
        off[d + 1] = off[d] + PyList_GET_SIZE(doc);
        if (off[d + 1] > total) goto plain; /* a list grew meanwhile (a key's __eq__ ran Python code) */
        for (Py_ssize_t k = 0; k < PyList_GET_SIZE(doc); k++, row++) {
            PyObject *item = PyList_GET_ITEM(doc, k);
            if (!PyDict_CheckExact(item)) goto plain;
            PyObject *span = PyDict_GetItemWithError(item, span_key);
            if (span == NULL) {
                if (PyErr_Occurred()) goto done;
                goto plain;
            }
            if (!span_of(span, length, &st[row], &en[row])) goto plain;
            for (Py_ssize_t f = 0; f < n_fields; f++) {
                PyObject *value = PyDict_GetItemWithError(item, PyTuple_GET_ITEM(fields, f));
                if (value == NULL) {
                    if (PyErr_Occurred()) goto done;
                    goto plain;
                }
                if (!PyUnicode_CheckExact(value)) goto plain;
                Py_INCREF(value);
                PyList_SET_ITEM(PyList_GET_ITEM(lists, f), row, value);
            }
        }
    }
    result = PyTuple_Pack(4, offsets, starts, ends, lists);
    goto done;
plain:
    if (!PyErr_Occurred()) {
        Py_INCREF(Py_None);
        result = Py_None;
    }
done:
    Py_XDECREF(span_key);
    Py_XDECREF(offsets);
    Py_XDECREF(starts);
    Py_XDECREF(ends);
    Py_XDECREF(lists); /* a list's unset slots are NULL, which list_dealloc skips */
    Py_DECREF(documents);
    Py_DECREF(texts);
    return result;
}

static PyMethodDef methods[] = {
    {"columns", columns, METH_VARARGS, "(offsets, starts, ends, [strings per field]) of plain violation lists, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_columns", "Violation dicts read in C.", -1, methods};

PyMODINIT_FUNC PyInit__columns(void) { return PyModule_Create(&module); }
