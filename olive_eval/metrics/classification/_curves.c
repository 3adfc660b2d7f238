/* Ranking-curve sums in C: the optional compiled form of olive_eval.metrics.classification.curves.curve_sums.
 *
 *   curve_sums(scores, positive) -> (positives, negatives, twice_area, ap_sum)
 *   class_curve_sums(scores, labels) -> [(positives, negatives, twice_area, ap_sum)] per column, one-vs-rest
 *
 * class_curve_sums reads a [N, C] float64 buffer (any strides) and int64 labels [N] (a row is a positive of column c
 * when its label is c); it builds the keys of a block of columns in one pass over the rows.
 * scores: a 1-D float64 buffer (strided: a column of a wider array is read in place) of finite values >= 0 (-0.0 is
 * 0.0; the Python side checks); positive: a 1-D buffer of bytes (numpy bool), 1 = positive, of the same length.
 * Walking the distinct scores from the highest, with tp/fp the positives/negatives scoring at or above each:
 * twice_area = sum((fp_k - fp_{k-1}) * (tp_k + tp_{k-1})), an integer (twice the trapezoidal area under the
 * unnormalised ROC curve), and ap_sum = sum((tp_k - tp_{k-1}) * tp_k / (tp_k + fp_k)) (average precision times the
 * positives). The numpy form computes the same sums from the sorted curve.
 *
 * A non-negative double orders like its bit pattern. The key of a value is its bit pattern shifted right past the
 * bits that are zero in every value (float32 scores widened to float64 lose 29 such bits), then left by one with the
 * label in the freed bit; the keys are sorted by a most-significant-digit radix sort over the bits that vary (8-bit
 * digits, a digit the same in every key skipped, small buckets by insertion: after the first digit or two the
 * buckets fit in cache), and equal scores are the runs of equal keys shifted right by one.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define DIGIT_BITS 8
#define DIGIT_BUCKETS (1 << DIGIT_BITS)

static int bit_length(uint64_t v) {
    int bits = 0;
    while (v) {
        bits++;
        v >>= 1;
    }
    return bits;
}

static inline uint64_t bits_of(const char *base, Py_ssize_t stride, Py_ssize_t i) {
    double v;
    memcpy(&v, base + i * stride, sizeof v);
    if (v == 0.0) v = 0.0; /* -0.0 */
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

#define SMALL 32

static void insertion_sort(uint64_t *a, Py_ssize_t n) {
    for (Py_ssize_t i = 1; i < n; i++) {
        uint64_t v = a[i];
        Py_ssize_t j = i;
        while (j > 0 && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

/* Sorts a[0:n] on its bits below `hi` (the bits above are equal in every key), most significant 8-bit digit first:
 * a digit the same in every key is skipped, each bucket is sorted on the bits below its digit, small ones by
 * insertion. `spare` holds n keys. */
static void msd_sort(uint64_t *a, uint64_t *spare, Py_ssize_t n, int hi) {
    size_t counts[DIGIT_BUCKETS];
    while (n > SMALL && hi > 0) {
        int width = hi < DIGIT_BITS ? hi : DIGIT_BITS;
        int shift = hi - width;
        uint64_t mask = ((uint64_t)1 << width) - 1;
        memset(counts, 0, sizeof counts);
        for (Py_ssize_t i = 0; i < n; i++) counts[(a[i] >> shift) & mask]++;
        hi = shift;
        if (counts[(a[0] >> shift) & mask] == (size_t)n) continue; /* one bucket: the next digit */
        size_t starts[DIGIT_BUCKETS], total = 0;
        for (uint64_t b = 0; b <= mask; b++) {
            starts[b] = total;
            total += counts[b];
        }
        size_t next[DIGIT_BUCKETS];
        memcpy(next, starts, sizeof next);
        for (Py_ssize_t i = 0; i < n; i++) spare[next[(a[i] >> shift) & mask]++] = a[i];
        memcpy(a, spare, (size_t)n * sizeof *a);
        for (uint64_t b = 0; b <= mask; b++)
            if (counts[b] > 1) msd_sort(a + starts[b], spare + starts[b], (Py_ssize_t)counts[b], shift);
        return;
    }
    if (hi > 0) insertion_sort(a, n);
}

#define TOP_BITS 16
#define TOP_BUCKETS (1 << TOP_BITS)

/* Sorts the n keys of `bits` bits into `a` (from `keys`, which it reuses as the spare buffer): the top digit is
 * TOP_BITS wide (`shift` = bits - that width), so that after one scatter the buckets (those in use) fit in cache
 * even when the scores' leading bits vary little (probabilities share most of their exponent bits). `counts`
 * holds the TOP_BUCKETS counts of the top digit, `starts` is scratch space of TOP_BUCKETS. */
static void sort_keys(uint64_t *keys, uint64_t *a, Py_ssize_t n, int shift, size_t *counts, size_t *starts) {
    uint64_t mask = TOP_BUCKETS - 1;
    size_t total = 0;
    for (uint64_t b = 0; b <= mask; b++) {
        starts[b] = total;
        total += counts[b];
    }
    for (Py_ssize_t i = 0; i < n; i++) a[starts[(keys[i] >> shift) & mask]++] = keys[i];
    size_t begin = 0;
    for (uint64_t b = 0; b <= mask; b++) {
        if (counts[b] > 1) msd_sort(a + begin, keys + begin, (Py_ssize_t)counts[b], shift);
        begin += counts[b];
    }
}

typedef struct {
    long long positives, negatives, twice_area;
    double ap_sum;
} Sums;

/* The sums of n keys of `bits` bits (sorted here; `spare` holds n keys, `counts` and `starts` TOP_BUCKETS each). */
static Sums key_sums(uint64_t *keys, uint64_t *spare, Py_ssize_t n, int bits, size_t *counts, size_t *starts) {
    int shift = bits > TOP_BITS ? bits - TOP_BITS : 0;
    memset(counts, 0, TOP_BUCKETS * sizeof *counts);
    for (Py_ssize_t i = 0; i < n; i++) counts[keys[i] >> shift]++;
    sort_keys(keys, spare, n, shift, counts, starts);
    const uint64_t *sorted = spare;
    long long tp = 0, fp = 0, prev_tp = 0, prev_fp = 0, twice_area = 0;
    double ap_sum = 0.0;
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        uint64_t k = sorted[i];
        if (k & 1)
            tp++;
        else
            fp++;
        if (i == 0 || (sorted[i - 1] >> 1) != (k >> 1)) { /* the last (lowest-placed) key of its score */
            twice_area += (fp - prev_fp) * (tp + prev_tp);
            ap_sum += (double)(tp - prev_tp) * ((double)tp / (double)(tp + fp));
            prev_tp = tp;
            prev_fp = fp;
        }
    }
    Sums out = {tp, fp, twice_area, ap_sum};
    return out;
}

/* The lowest set bit and the key width (+ the label bit) of values whose bit patterns OR to `any`. */
static void key_layout(uint64_t any, int *low, int *bits) {
    *low = any ? __builtin_ctzll(any) : 0;
    *bits = bit_length(any >> *low) + 1;
}

static int float64_buffer(PyObject *object, Py_buffer *view, int ndim, const char *name) {
    if (PyObject_GetBuffer(object, view, PyBUF_STRIDED_RO | PyBUF_FORMAT) < 0) return -1;
    const char *format = view->format;
    if (format != NULL && (format[0] == '<' || format[0] == '=' || format[0] == '@')) format++;
    if (view->ndim != ndim || format == NULL || strcmp(format, "d") != 0) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "%s: expected a %d-D float64 buffer", name, ndim);
        return -1;
    }
    return 0;
}

typedef struct {
    uint64_t *keys, *spare;
    size_t *counts, *starts;
} Scratch;

static int scratch_alloc(Scratch *s, Py_ssize_t keys, Py_ssize_t spare) {
    s->keys = PyMem_Malloc((size_t)(keys > 0 ? keys : 1) * sizeof *s->keys);
    s->spare = PyMem_Malloc((size_t)(spare > 0 ? spare : 1) * sizeof *s->spare);
    s->counts = PyMem_Malloc(TOP_BUCKETS * sizeof *s->counts);
    s->starts = PyMem_Malloc(TOP_BUCKETS * sizeof *s->starts);
    if (s->keys == NULL || s->spare == NULL || s->counts == NULL || s->starts == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void scratch_free(Scratch *s) {
    PyMem_Free(s->keys);
    PyMem_Free(s->spare);
    PyMem_Free(s->counts);
    PyMem_Free(s->starts);
}

static PyObject *sums_tuple(Sums s) {
    return Py_BuildValue("(LLLd)", s.positives, s.negatives, s.twice_area, s.ap_sum);
}

static PyObject *curve_sums(PyObject *self, PyObject *args) {
    PyObject *scores_obj, *positive_obj;
    if (!PyArg_ParseTuple(args, "OO", &scores_obj, &positive_obj)) return NULL;
    Py_buffer sv, pv;
    if (float64_buffer(scores_obj, &sv, 1, "scores") < 0) return NULL;
    if (PyObject_GetBuffer(positive_obj, &pv, PyBUF_STRIDED_RO) < 0) {
        PyBuffer_Release(&sv);
        return NULL;
    }
    PyObject *result = NULL;
    Scratch scratch = {NULL, NULL, NULL, NULL};
    if (pv.ndim != 1 || pv.itemsize != 1 || pv.shape[0] != sv.shape[0]) {
        PyErr_SetString(PyExc_TypeError, "positive: expected a 1-D bool buffer as long as the scores");
        goto done;
    }
    Py_ssize_t n = sv.shape[0];
    if (scratch_alloc(&scratch, n, n) < 0) goto done;
    Sums sums;
    Py_BEGIN_ALLOW_THREADS
    const char *sbase = sv.buf, *pbase = pv.buf;
    Py_ssize_t sstride = sv.strides[0], pstride = pv.strides[0];
    uint64_t any = 0;
    for (Py_ssize_t i = 0; i < n; i++) any |= bits_of(sbase, sstride, i);
    int low, bits;
    key_layout(any, &low, &bits);
    for (Py_ssize_t i = 0; i < n; i++)
        scratch.keys[i] = ((bits_of(sbase, sstride, i) >> low) << 1) | (pbase[i * pstride] != 0);
    sums = key_sums(scratch.keys, scratch.spare, n, bits, scratch.counts, scratch.starts);
    Py_END_ALLOW_THREADS
    result = sums_tuple(sums);
done:
    scratch_free(&scratch);
    PyBuffer_Release(&sv);
    PyBuffer_Release(&pv);
    return result;
}

#define BLOCK_KEYS (1 << 23) /* keys built at once: a block of columns from one pass over the rows */

static PyObject *class_curve_sums(PyObject *self, PyObject *args) {
    PyObject *scores_obj, *labels_obj;
    if (!PyArg_ParseTuple(args, "OO", &scores_obj, &labels_obj)) return NULL;
    Py_buffer sv, lv;
    if (float64_buffer(scores_obj, &sv, 2, "scores") < 0) return NULL;
    if (PyObject_GetBuffer(labels_obj, &lv, PyBUF_STRIDED_RO | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&sv);
        return NULL;
    }
    PyObject *result = NULL;
    Scratch scratch = {NULL, NULL, NULL, NULL};
    Sums *sums = NULL;
    int *lows = NULL, *bits = NULL;
    uint64_t *any = NULL;
    const char *format = lv.format;
    if (format != NULL && (format[0] == '<' || format[0] == '=' || format[0] == '@')) format++;
    if (lv.ndim != 1 || lv.itemsize != 8 || format == NULL || (strcmp(format, "q") != 0 && strcmp(format, "l") != 0) ||
        lv.shape[0] != sv.shape[0]) {
        PyErr_SetString(PyExc_TypeError, "labels: expected a 1-D int64 buffer with one label per row of scores");
        goto done;
    }
    Py_ssize_t n = sv.shape[0], classes = sv.shape[1];
    Py_ssize_t block = n > 0 ? BLOCK_KEYS / n : classes;
    if (block < 1) block = 1;
    if (block > classes) block = classes;
    sums = PyMem_Calloc(classes > 0 ? classes : 1, sizeof *sums);
    lows = PyMem_Calloc(block > 0 ? block : 1, sizeof *lows);
    bits = PyMem_Calloc(block > 0 ? block : 1, sizeof *bits);
    any = PyMem_Calloc(block > 0 ? block : 1, sizeof *any);
    if (sums == NULL || lows == NULL || bits == NULL || any == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (scratch_alloc(&scratch, n * block, n) < 0) goto done;
    Py_BEGIN_ALLOW_THREADS
    const char *base = sv.buf, *lbase = lv.buf;
    Py_ssize_t rs = sv.strides[0], cs = sv.strides[1], ls = lv.strides[0];
    for (Py_ssize_t first = 0; first < classes; first += block) {
        Py_ssize_t width = classes - first < block ? classes - first : block;
        memset(any, 0, (size_t)width * sizeof *any);
        for (Py_ssize_t i = 0; i < n; i++) {
            const char *row = base + i * rs + first * cs;
            for (Py_ssize_t j = 0; j < width; j++) any[j] |= bits_of(row, cs, j);
        }
        for (Py_ssize_t j = 0; j < width; j++) key_layout(any[j], &lows[j], &bits[j]);
        for (Py_ssize_t i = 0; i < n; i++) {
            const char *row = base + i * rs + first * cs;
            long long label;
            memcpy(&label, lbase + i * ls, sizeof label);
            for (Py_ssize_t j = 0; j < width; j++)
                scratch.keys[j * n + i] = ((bits_of(row, cs, j) >> lows[j]) << 1) | (label == first + j);
        }
        for (Py_ssize_t j = 0; j < width; j++)
            sums[first + j] = key_sums(scratch.keys + j * n, scratch.spare, n, bits[j], scratch.counts, scratch.starts);
    }
    Py_END_ALLOW_THREADS
    result = PyList_New(classes);
    for (Py_ssize_t c = 0; result != NULL && c < classes; c++) {
        PyObject *item = sums_tuple(sums[c]);
        if (item == NULL) Py_CLEAR(result);
        else PyList_SET_ITEM(result, c, item);
    }
done:
    scratch_free(&scratch);
    PyMem_Free(sums);
    PyMem_Free(lows);
    PyMem_Free(bits);
    PyMem_Free(any);
    PyBuffer_Release(&sv);
    PyBuffer_Release(&lv);
    return result;
}

static PyMethodDef methods[] = {
    {"curve_sums", curve_sums, METH_VARARGS, "(positives, negatives, twice_area, ap_sum) of scores [N] and bools [N]."},
    {"class_curve_sums", class_curve_sums, METH_VARARGS,
     "[(positives, negatives, twice_area, ap_sum)] of each column of scores [N, C], one-vs-rest of int64 labels [N]."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_curves", "Ranking-curve sums in C.", -1, methods};

PyMODINIT_FUNC PyInit__curves(void) { return PyModule_Create(&module); }
