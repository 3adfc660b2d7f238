/* Violation matching past the reading, in C: the optional compiled form of kernels' overlap, coding and greedy.
 *
 *   overlaps(pred_offsets, pred_starts, pred_ends, truth_offsets, truth_starts, truth_ends, above)
 *       -> (doc, pred, truth, iou): every pair of a document with span IoU > above, by document, prediction, truth
 *   codes(values, rows) -> (distinct, codes): values[rows]'s distinct strings in first-seen order and each row's
 *       position among them (-1 for rows not listed)
 *   greedy(firsts, pred, truth, score) -> positions: per document (pairs firsts[k]..firsts[k+1]), the greedy's
 *       matching: highest score first, ties to the lower prediction row, then the lower truth row; one-to-one
 *
 * Arrays come in as C-contiguous int64 / float64 buffers (numpy arrays) and go back as bytearrays
 * (np.frombuffer reads them). IoU is (double)intersection / (double)union, as numpy divides int64 arrays.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Py_buffer view;
    Py_ssize_t n;
} Array;

static int get(PyObject *obj, Array *a, const char *what) {
    if (PyObject_GetBuffer(obj, &a->view, PyBUF_C_CONTIGUOUS) < 0) return 0;
    if (a->view.itemsize != 8) {
        PyBuffer_Release(&a->view);
        PyErr_Format(PyExc_TypeError, "%s must hold 8-byte items", what);
        return 0;
    }
    a->n = a->view.len / 8;
    return 1;
}

#define I64(a) ((const int64_t *)(a).view.buf)
#define F64(a) ((const double *)(a).view.buf)

static PyObject *bytes_of(Py_ssize_t n) { return PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)8 * n); }

static PyObject *overlaps(PyObject *self, PyObject *args) {
    PyObject *o[6];
    double above;
    if (!PyArg_ParseTuple(args, "OOOOOOd", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &above)) return NULL;
    Array a[6];
    int got = 0;
    PyObject *result = NULL, *out[4] = {NULL, NULL, NULL, NULL};
    for (; got < 6; got++)
        if (!get(o[got], &a[got], "arrays")) goto done;
    const int64_t *po = I64(a[0]), *ps = I64(a[1]), *pe = I64(a[2]);
    const int64_t *to = I64(a[3]), *ts = I64(a[4]), *te = I64(a[5]);
    Py_ssize_t n_docs = a[0].n - 1;
    if (n_docs < 0 || a[3].n != a[0].n) {
        PyErr_SetString(PyExc_ValueError, "offsets of both sides must have the same length");
        goto done;
    }
    Py_ssize_t count = 0;
    for (int pass = 0; pass < 2; pass++) {
        int64_t *od = NULL, *op = NULL, *og = NULL;
        double *oi = NULL;
        if (pass == 1) {
            for (int k = 0; k < 4; k++)
                if ((out[k] = bytes_of(count)) == NULL) goto done;
            od = (int64_t *)PyByteArray_AS_STRING(out[0]);
            op = (int64_t *)PyByteArray_AS_STRING(out[1]);
            og = (int64_t *)PyByteArray_AS_STRING(out[2]);
            oi = (double *)PyByteArray_AS_STRING(out[3]);
        }
        Py_ssize_t k = 0;
        for (Py_ssize_t d = 0; d < n_docs; d++)
            for (int64_t i = po[d]; i < po[d + 1]; i++)
                for (int64_t j = to[d]; j < to[d + 1]; j++) {
                    int64_t lo = ps[i] > ts[j] ? ps[i] : ts[j], hi = pe[i] < te[j] ? pe[i] : te[j];
                    int64_t inter = hi > lo ? hi - lo : 0;
                    if (inter == 0 && above >= 0) continue; /* IoU 0: never above a threshold >= 0 */
                    int64_t uni = (pe[i] - ps[i]) + (te[j] - ts[j]) - inter;
                    double iou = uni > 0 ? (double)inter / (double)uni : 0.0;
                    if (!(iou > above)) continue;
                    if (pass == 1) {
                        od[k] = d;
                        op[k] = i;
                        og[k] = j;
                        oi[k] = iou;
                    }
                    k++;
                }
        count = k;
    }
    result = PyTuple_Pack(4, out[0], out[1], out[2], out[3]);
done:
    for (int k = 0; k < got; k++) PyBuffer_Release(&a[k].view);
    for (int k = 0; k < 4; k++) Py_XDECREF(out[k]);
    return result;
}

static PyObject *codes(PyObject *self, PyObject *args) {
    PyObject *values, *rows_obj;
    if (!PyArg_ParseTuple(args, "O!O", &PyList_Type, &values, &rows_obj)) return NULL;
    Array rows;
    if (!get(rows_obj, &rows, "rows")) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(values);
    PyObject *result = NULL, *index = PyDict_New(), *distinct = PyList_New(0), *out = bytes_of(n);
    if (index == NULL || distinct == NULL || out == NULL) goto done;
    int64_t *c = (int64_t *)PyByteArray_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) c[i] = -1;
    const int64_t *r = I64(rows);
    for (Py_ssize_t k = 0; k < rows.n; k++) {
        if (r[k] < 0 || r[k] >= n) {
            PyErr_SetString(PyExc_IndexError, "row out of range");
            goto done;
        }
        if (c[r[k]] >= 0) continue;
        PyObject *s = PyList_GET_ITEM(values, r[k]);
        PyObject *code = PyDict_GetItemWithError(index, s);
        if (code == NULL) {
            if (PyErr_Occurred()) goto done;
            code = PyLong_FromSsize_t(PyList_GET_SIZE(distinct));
            if (code == NULL) goto done;
            int failed = PyDict_SetItem(index, s, code) < 0 || PyList_Append(distinct, s) < 0;
            Py_DECREF(code); /* the dict holds it */
            if (failed) goto done;
        }
        c[r[k]] = PyLong_AsSsize_t(code);
    }
    result = PyTuple_Pack(2, distinct, out);
done:
    PyBuffer_Release(&rows.view);
    Py_XDECREF(index);
    Py_XDECREF(distinct);
    Py_XDECREF(out);
    return result;
}

typedef struct {
    double score;
    int64_t pred, truth, pos;
} Pair;

/* Documents with at most this many candidate pairs take the greedy by repeated scans, the rest by one sort. */
#define SCAN 256

static inline int by_greedy(const void *x, const void *y) {
    const Pair *a = x, *b = y;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    if (a->pred != b->pred) return a->pred < b->pred ? -1 : 1;
    return (a->truth > b->truth) - (a->truth < b->truth);
}

static int by_rows(const void *x, const void *y) {
    const Pair *a = x, *b = y;
    if (a->pred != b->pred) return a->pred < b->pred ? -1 : 1;
    return (a->truth > b->truth) - (a->truth < b->truth);
}

static PyObject *greedy(PyObject *self, PyObject *args) {
    PyObject *o[4];
    if (!PyArg_ParseTuple(args, "OOOO", &o[0], &o[1], &o[2], &o[3])) return NULL;
    Array a[4];
    int got = 0;
    PyObject *result = NULL, *out = NULL;
    Pair *pairs = NULL;
    char *used_p = NULL, *used_g = NULL;
    for (; got < 4; got++)
        if (!get(o[got], &a[got], "arrays")) goto done;
    const int64_t *firsts = I64(a[0]), *p = I64(a[1]), *g = I64(a[2]);
    const double *s = F64(a[3]);
    Py_ssize_t n = a[1].n, n_segments = a[0].n - 1;
    if (a[2].n != n || a[3].n != n || n_segments < 0 || firsts[n_segments] != n) {
        PyErr_SetString(PyExc_ValueError, "pred, truth and score must have one length, the last first");
        goto done;
    }
    int64_t max_p = -1, max_g = -1;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (p[k] < 0 || g[k] < 0) {
            PyErr_SetString(PyExc_ValueError, "rows must be >= 0");
            goto done;
        }
        if (p[k] > max_p) max_p = p[k];
        if (g[k] > max_g) max_g = g[k];
    }
    pairs = malloc(sizeof(Pair) * (n ? n : 1));
    used_p = calloc((size_t)max_p + 2, 1);
    used_g = calloc((size_t)max_g + 2, 1);
    if ((out = bytes_of(n)) == NULL) goto done;
    if (pairs == NULL || used_p == NULL || used_g == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t *taken = (int64_t *)PyByteArray_AS_STRING(out);
    Py_ssize_t count = 0;
    for (Py_ssize_t d = 0; d < n_segments; d++) {
        int64_t lo = firsts[d], hi = firsts[d + 1];
        if (lo < 0 || hi < lo || hi > n) {
            PyErr_SetString(PyExc_ValueError, "firsts must rise from 0 to the number of pairs");
            goto done;
        }
        int64_t m = hi - lo;
        for (int64_t k = lo; k < hi; k++) pairs[k - lo] = (Pair){s[k], p[k], g[k], k};
        if (m <= SCAN) {
            /* A document's rounds are at most min(distinct predictions, distinct truths) <= sqrt(m): take the best
             * pair, drop the pairs of its prediction or truth, repeat; cheaper than sorting small documents. With
             * the pairs in (prediction, truth) order (as kernels lists them; else sorted so first), the first of
             * the highest scores is the greedy's pick, and dropping pairs keeps that order. */
            int ordered = 1;
            for (int64_t k = 1; k < m && ordered; k++)
                ordered = pairs[k - 1].pred < pairs[k].pred ||
                          (pairs[k - 1].pred == pairs[k].pred && pairs[k - 1].truth < pairs[k].truth);
            if (!ordered) qsort(pairs, (size_t)m, sizeof(Pair), by_rows);
            while (m > 0) {
                int64_t best = 0;
                double top = pairs[0].score;
                for (int64_t k = 1; k < m; k++)
                    if (pairs[k].score > top) {
                        top = pairs[k].score;
                        best = k;
                    }
                Pair x = pairs[best];
                taken[count++] = x.pos;
                int64_t kept = 0;
                for (int64_t k = 0; k < m; k++)
                    if (pairs[k].pred != x.pred && pairs[k].truth != x.truth) pairs[kept++] = pairs[k];
                m = kept;
            }
            continue;
        }
        qsort(pairs, (size_t)m, sizeof(Pair), by_greedy);
        for (int64_t k = 0; k < m; k++) {
            Pair *x = &pairs[k];
            if (used_p[x->pred] || used_g[x->truth]) continue;
            used_p[x->pred] = used_g[x->truth] = 1;
            taken[count++] = x->pos;
        }
    }
    if (PyByteArray_Resize(out, (Py_ssize_t)8 * count) < 0) goto done;
    Py_INCREF(out);
    result = out;
done:
    for (int k = 0; k < got; k++) PyBuffer_Release(&a[k].view);
    Py_XDECREF(out);
    free(pairs);
    free(used_p);
    free(used_g);
    return result;
}

static PyMethodDef methods[] = {
    {"overlaps", overlaps, METH_VARARGS, "(doc, pred, truth, iou) of the pairs with span IoU above a threshold."},
    {"codes", codes, METH_VARARGS, "(distinct strings, int64 codes) of values[rows]."},
    {"greedy", greedy, METH_VARARGS, "Positions of the pairs the greedy takes, per document, in its order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_matching", "Violation matching in C.", -1, methods};

PyMODINIT_FUNC PyInit__matching(void) { return PyModule_Create(&module); }
