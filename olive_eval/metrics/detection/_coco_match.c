/* COCO's greedy bbox matching in C: the optional compiled form of matching.match_coco's IoUs and step loop.
 *
 *   greedy(det_boxes, group_offsets, gt_lo, gt_hi, gt_boxes, gt_crowd, gt_keep, thresholds, n_area)
 *       -> (det, area, iou, gt): every match, as int64 bytearrays (np.frombuffer reads them)
 *   group_order(keys, scores, n_keys) -> order: np.lexsort((-scores, keys)) for int64 keys in [0, n_keys), as an
 *       int64 bytearray: a counting sort by key (stable), then each key's rows by descending score, ties in row order
 *       (insertion sort for a few rows, a merge sort past that; both stable)
 *
 * det_boxes [N, 4] float64 xywh: the kept detections, grouped by (image, category), each group in score order
 * (group g is rows group_offsets[g]..group_offsets[g + 1]); gt_boxes [G, 4] float64 xywh, gt_crowd [G] uint8 and
 * gt_keep [G, A] uint8 (1: not ignored in area range a): the ground truths sorted by (image, category), input
 * order kept within a key; group g meets ground truths gt_lo[g]..gt_hi[g]. thresholds [T] float64, already
 * min(t, 1 - 1e-10). Within a group, each detection in turn takes, per (area range, threshold), among the ground
 * truths still free (a crowd is never used up) with IoU >= the threshold, the lexicographic maximum of
 * (not ignored, IoU, position): pycocotools' evaluateImg. IoU is boxes.box_iou_pairs' arithmetic, operation for
 * operation (no contraction into fused multiply-adds), so the values and the matches are identical to numpy's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

typedef struct {
    Py_buffer view;
    Py_ssize_t n;
} Array;

static int get(PyObject *obj, Array *a, Py_ssize_t itemsize, const char *what) {
    if (PyObject_GetBuffer(obj, &a->view, PyBUF_C_CONTIGUOUS) < 0) return 0;
    if (a->view.itemsize != itemsize) {
        PyBuffer_Release(&a->view);
        PyErr_Format(PyExc_TypeError, "%s must hold %zd-byte items", what, itemsize);
        return 0;
    }
    a->n = a->view.len / itemsize;
    return 1;
}

typedef struct {
    int64_t *v[4];
    Py_ssize_t n, cap;
} Out;

static int push(Out *o, int64_t d, int64_t a, int64_t t, int64_t g) {
    if (o->n == o->cap) {
        Py_ssize_t cap = o->cap ? 2 * o->cap : 1024;
        for (int k = 0; k < 4; k++) {
            int64_t *p = realloc(o->v[k], (size_t)cap * sizeof(int64_t));
            if (p == NULL) return 0;
            o->v[k] = p;
        }
        o->cap = cap;
    }
    o->v[0][o->n] = d;
    o->v[1][o->n] = a;
    o->v[2][o->n] = t;
    o->v[3][o->n] = g;
    o->n++;
    return 1;
}

static double box_iou(const double *d, const double *g, int crowd) {
    double r1 = d[2] + d[0], r2 = g[2] + g[0], b1 = d[3] + d[1], b2 = g[3] + g[1];
    double w = (r1 < r2 ? r1 : r2) - (d[0] > g[0] ? d[0] : g[0]);
    double h = (b1 < b2 ? b1 : b2) - (d[1] > g[1] ? d[1] : g[1]);
    if (!(w > 0 && h > 0)) return 0.0;
    double inter = w * h;
    double da = d[2] * d[3];
    double ga = g[2] * g[3];
    double uni = crowd ? da : (da + ga) - inter;
    return inter / uni;
}

static PyObject *greedy(PyObject *self, PyObject *args) {
    PyObject *o[8];
    Py_ssize_t n_area;
    if (!PyArg_ParseTuple(args, "OOOOOOOOn", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7], &n_area))
        return NULL;
    static const Py_ssize_t sizes[8] = {8, 8, 8, 8, 8, 1, 1, 8};
    Array a[8];
    int got = 0;
    PyObject *result = NULL, *out[4] = {NULL, NULL, NULL, NULL};
    Out acc = {{NULL, NULL, NULL, NULL}, 0, 0};
    double *iou = NULL;
    Py_ssize_t *cand = NULL;
    unsigned char *matched = NULL;
    int failed = 0;
    for (; got < 8; got++)
        if (!get(o[got], &a[got], sizes[got], "arrays")) goto done;
    const double *dbox = a[0].view.buf, *gbox = a[4].view.buf, *thr = a[7].view.buf;
    const int64_t *off = a[1].view.buf, *glo = a[2].view.buf, *ghi = a[3].view.buf;
    const unsigned char *crowd = a[5].view.buf, *keep = a[6].view.buf;
    Py_ssize_t n_groups = a[1].n - 1, n_thr = a[7].n, n_gt = a[5].n;
    if (n_groups < 0 || a[2].n != n_groups || a[3].n != n_groups || a[0].n != 4 * off[n_groups] ||
        a[4].n != 4 * n_gt || n_area < 0 || a[6].n != n_gt * n_area) {
        PyErr_SetString(PyExc_ValueError, "greedy: inconsistent array lengths");
        goto done;
    }
    Py_ssize_t widest = 1;
    for (Py_ssize_t g = 0; g < n_groups; g++) {
        if (glo[g] < 0 || ghi[g] < glo[g] || ghi[g] > n_gt || off[g] < 0 || off[g + 1] < off[g]) {
            PyErr_SetString(PyExc_ValueError, "greedy: a group's range is out of bounds");
            goto done;
        }
        if (ghi[g] - glo[g] > widest) widest = ghi[g] - glo[g];
    }
    double lowest = 0.0;
    for (Py_ssize_t t = 0; t < n_thr; t++)
        if (t == 0 || thr[t] < lowest) lowest = thr[t];
    iou = malloc((size_t)widest * sizeof *iou);
    cand = malloc((size_t)widest * sizeof *cand);
    matched = malloc((size_t)(widest * n_area * n_thr + 1));
    if (iou == NULL || cand == NULL || matched == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t g = 0; g < n_groups && !failed && n_thr > 0; g++) {
        Py_ssize_t lo = glo[g], ng = ghi[g] - lo;
        if (ng == 0) continue;
        memset(matched, 0, (size_t)(ng * n_area * n_thr));
        for (int64_t d = off[g]; d < off[g + 1] && !failed; d++) {
            Py_ssize_t nc = 0;
            for (Py_ssize_t j = 0; j < ng; j++) {
                double v = box_iou(dbox + 4 * d, gbox + 4 * (lo + j), crowd[lo + j]);
                if (v >= lowest) {
                    cand[nc] = j;
                    iou[nc++] = v;
                }
            }
            for (Py_ssize_t ar = 0; ar < n_area && nc; ar++)
                for (Py_ssize_t t = 0; t < n_thr; t++) {
                    double th = thr[t], best_iou = 0.0;
                    Py_ssize_t best = -1;
                    int best_keep = -1;
                    for (Py_ssize_t c = 0; c < nc; c++) {
                        Py_ssize_t j = cand[c];
                        if (iou[c] < th || (matched[(j * n_area + ar) * n_thr + t] && !crowd[lo + j])) continue;
                        int k = keep[(lo + j) * n_area + ar] != 0;
                        if (k > best_keep || (k == best_keep && iou[c] >= best_iou)) {
                            best = j;
                            best_keep = k;
                            best_iou = iou[c];
                        }
                    }
                    if (best < 0) continue;
                    matched[(best * n_area + ar) * n_thr + t] = 1;
                    if (!push(&acc, d, ar, t, lo + best)) failed = 1;
                }
        }
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    for (int k = 0; k < 4; k++) {
        if ((out[k] = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)8 * acc.n)) == NULL) goto done;
        if (acc.n) memcpy(PyByteArray_AS_STRING(out[k]), acc.v[k], (size_t)acc.n * 8);
    }
    result = PyTuple_Pack(4, out[0], out[1], out[2], out[3]);
done:
    for (int k = 0; k < got; k++) PyBuffer_Release(&a[k].view);
    for (int k = 0; k < 4; k++) {
        Py_XDECREF(out[k]);
        free(acc.v[k]);
    }
    free(iou);
    free(cand);
    free(matched);
    return result;
}

/* Rows a[0..n) by descending score, stable: insertion sort for a few rows, a top-down merge sort past that. */
static void sort_desc(int64_t *a, int64_t *tmp, Py_ssize_t n, const double *score) {
    if (n <= 24) {
        for (Py_ssize_t i = 1; i < n; i++) {
            int64_t v = a[i];
            double sv = score[v];
            Py_ssize_t j = i;
            while (j > 0 && score[a[j - 1]] < sv) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = v;
        }
        return;
    }
    Py_ssize_t half = n / 2;
    sort_desc(a, tmp, half, score);
    sort_desc(a + half, tmp, n - half, score);
    memcpy(tmp, a, (size_t)half * sizeof *a);
    Py_ssize_t i = 0, j = half, k = 0;
    while (i < half && j < n) a[k++] = score[a[j]] > score[tmp[i]] ? a[j++] : tmp[i++];
    while (i < half) a[k++] = tmp[i++];
}

static PyObject *group_order(PyObject *self, PyObject *args) {
    PyObject *ko, *so;
    Py_ssize_t n_keys;
    if (!PyArg_ParseTuple(args, "OOn", &ko, &so, &n_keys)) return NULL;
    Array k, s;
    if (!get(ko, &k, 8, "keys")) return NULL;
    if (!get(so, &s, 8, "scores")) {
        PyBuffer_Release(&k.view);
        return NULL;
    }
    PyObject *result = NULL;
    int64_t *start = NULL, *tmp = NULL;
    const int64_t *key = k.view.buf;
    const double *score = s.view.buf;
    Py_ssize_t n = k.n;
    if (s.n != n || n_keys < 0) {
        PyErr_SetString(PyExc_ValueError, "group_order: keys and scores must have the same length");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (key[i] < 0 || key[i] >= n_keys) {
            PyErr_SetString(PyExc_ValueError, "group_order: a key is out of range");
            goto done;
        }
    start = calloc((size_t)n_keys + 1, sizeof *start);
    tmp = malloc(((size_t)n / 2 + 1) * sizeof *tmp);
    if (start == NULL || tmp == NULL || (result = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)8 * n)) == NULL) {
        if (result == NULL && !PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    int64_t *order = (int64_t *)PyByteArray_AS_STRING(result);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) start[key[i] + 1]++;
    for (Py_ssize_t g = 0; g < n_keys; g++) start[g + 1] += start[g];
    for (Py_ssize_t i = 0; i < n; i++) order[start[key[i]]++] = i; /* start[g] is now where key g ends */
    Py_ssize_t lo = 0;
    for (Py_ssize_t g = 0; g < n_keys; g++) {
        if (start[g] - lo > 1) sort_desc(order + lo, tmp, start[g] - lo, score);
        lo = start[g];
    }
    Py_END_ALLOW_THREADS
done:
    free(start);
    free(tmp);
    PyBuffer_Release(&k.view);
    PyBuffer_Release(&s.view);
    return result;
}

static PyMethodDef methods[] = {
    {"greedy", greedy, METH_VARARGS, "COCO's greedy bbox matching of every (image, category) group: (det, area, iou, gt)."},
    {"group_order", group_order, METH_VARARGS, "np.lexsort((-scores, keys)) for int64 keys in [0, n_keys)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_coco_match", "COCO's greedy bbox matching in C.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__coco_match(void) { return PyModule_Create(&module); }
