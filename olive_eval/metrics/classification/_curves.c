/* Ranking-curve sums in C: the optional compiled form of olive_eval.metrics.classification.curves.curve_sums.
 *
 *   curve_sums(scores, positive) -> (positives, negatives, twice_area, ap_sum)
 *   class_curve_sums(scores, labels[, threads]) -> [(positives, negatives, twice_area, ap_sum)] per column,
 *       one-vs-rest; None when a score is negative or NaN (the caller takes its per-column path)
 *
 * class_curve_sums reads a [N, C] float64 buffer (any strides) and int64 labels [N] (a row is a positive of column c
 * when its label is c); it builds the keys of a block of columns in one pass over the rows, split by rows across
 * `threads` threads (default 1, the GIL released), then sorts and sums the columns, one a thread.
 * scores: a 1-D float64 buffer (strided: a column of a wider array is read in place) of finite values >= 0 (-0.0 is
 * 0.0; the Python side checks); positive: a 1-D buffer of bytes (numpy bool), 1 = positive, of the same length.
 * Walking the distinct scores from the highest, with tp/fp the positives/negatives scoring at or above each:
 * twice_area = sum((fp_k - fp_{k-1}) * (tp_k + tp_{k-1})), an integer (twice the trapezoidal area under the
 * unnormalised ROC curve), and ap_sum = sum((tp_k - tp_{k-1}) * tp_k / (tp_k + fp_k)) (average precision times the
 * positives). The numpy form computes the same sums from the sorted curve.
 *
 * A non-negative double orders like its bit pattern. The key of a value is its bit pattern shifted left by one
 * (past the sign bit) with the label in the freed bit; the keys are sorted by a most-significant-digit radix sort
 * that starts below the bits every value shares (an 11-bit top digit, then 8-bit digits, a digit the same in every
 * key skipped, small buckets by insertion, so float32 scores' zero low bits cost nothing), each top bucket walked
 * as soon as it is sorted, while in cache; equal scores are the runs of equal keys shifted right by one.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../run_jobs.h"

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

static int any_positive(const uint64_t *a, Py_ssize_t n) {
    uint64_t labels = 0;
    for (Py_ssize_t i = 0; i < n; i++) labels |= a[i];
    return (int)(labels & 1);
}

/* Sorts a[0:n] on its bits below `hi` (the bits above are equal in every key), most significant 8-bit digit first:
 * a digit the same in every key is skipped, each bucket is sorted on the bits below its digit, small ones by
 * insertion. `spare` holds n keys. Keys without a positive are left in any order when `hi` >= 1: they then differ
 * from every other bucket's keys in a score bit, and walking negatives only adds to fp in steps that sum to the
 * same twice_area (an integer) and add exact zeros to ap_sum, so the sums are the same bits as sorted. */
static void msd_sort(uint64_t *a, uint64_t *spare, Py_ssize_t n, int hi) {
    if (hi > 0 && !any_positive(a, n)) return;
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

#define TOP_BITS 11
#define TOP_BUCKETS (1 << TOP_BITS)

typedef struct {
    long long positives, negatives, twice_area;
    double ap_sum;
} Sums;

/* The walk down the sorted keys: tp/fp so far, those at the last closed score, and the score being counted. */
typedef struct {
    long long tp, fp, prev_tp, prev_fp, twice_area;
    double ap_sum;
    uint64_t score;
    int open;
} Walk;

static inline void close_score(Walk *w) {
    w->twice_area += (w->fp - w->prev_fp) * (w->tp + w->prev_tp);
    w->ap_sum += (double)(w->tp - w->prev_tp) * ((double)w->tp / (double)(w->tp + w->fp));
    w->prev_tp = w->tp;
    w->prev_fp = w->fp;
}

/* Counts a[0:n] (ascending) from the highest key; a score closes when the next lower key has another score. */
static inline void walk_down(Walk *w, const uint64_t *a, Py_ssize_t n) {
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        uint64_t k = a[i];
        if (w->open && (k >> 1) != w->score) close_score(w);
        w->open = 1;
        w->score = k >> 1;
        if (k & 1)
            w->tp++;
        else
            w->fp++;
    }
}

/* The sums of n keys whose bits at and above `varying` are the same in every key (sorted here; `spare` holds n
 * keys, `counts` and `starts` TOP_BUCKETS each). One TOP_BITS-wide scatter on the highest varying bits into
 * `spare`, then, from the highest bucket down, each bucket sorted while in cache (by msd_sort, `keys` as its spare)
 * and walked at once: no pass over the sorted keys afterwards. */
static Sums key_sums(uint64_t *keys, uint64_t *spare, Py_ssize_t n, int varying, size_t *counts, size_t *starts) {
    int shift = varying > TOP_BITS ? varying - TOP_BITS : 0;
    uint64_t mask = TOP_BUCKETS - 1;
    memset(counts, 0, TOP_BUCKETS * sizeof *counts);
    for (Py_ssize_t i = 0; i < n; i++) counts[(keys[i] >> shift) & mask]++;
    size_t total = 0;
    for (uint64_t b = 0; b <= mask; b++) {
        starts[b] = total;
        total += counts[b];
    }
    for (Py_ssize_t i = 0; i < n; i++) spare[starts[(keys[i] >> shift) & mask]++] = keys[i]; /* starts: the ends */
    Walk w;
    memset(&w, 0, sizeof w);
    for (Py_ssize_t b = (Py_ssize_t)mask; b >= 0; b--) {
        size_t count = counts[b];
        if (count == 0) continue;
        size_t begin = starts[b] - count;
        if (count > 1) msd_sort(spare + begin, keys + begin, (Py_ssize_t)count, shift);
        walk_down(&w, spare + begin, (Py_ssize_t)count);
    }
    if (w.open) close_score(&w);
    Sums out = {w.tp, w.fp, w.twice_area, w.ap_sum};
    return out;
}

/* The key width past the bits the same in every key: bit patterns OR to `any`, AND to `all` (+ the label bit). */
static int varying_bits(uint64_t any, uint64_t all) { return bit_length(any ^ all) + 1; }

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
    uint64_t any = 0, all = ~(uint64_t)0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t b = bits_of(sbase, sstride, i);
        any |= b;
        all &= b;
        scratch.keys[i] = (b << 1) | (pbase[i * pstride] != 0);
    }
    int bits = varying_bits(any, all);
    sums = key_sums(scratch.keys, scratch.spare, n, bits, scratch.counts, scratch.starts);
    Py_END_ALLOW_THREADS
    result = sums_tuple(sums);
done:
    scratch_free(&scratch);
    PyBuffer_Release(&sv);
    PyBuffer_Release(&pv);
    return result;
}

#define BLOCK_KEYS (1 << 24) /* keys built at once: a block of columns from one pass over the rows */
#define SIGN_BIT ((uint64_t)1 << 63)
#define INF_BITS ((uint64_t)0x7FF0000000000000ULL) /* a pattern above it (sign clear) is a NaN */

/* One thread's share of a block of columns: first the keys of rows [lo, hi) of every column of the block (and the
 * OR, AND and maximum of their bit patterns, for the key width and the NaN / negative check), then whole columns,
 * taken in turn from the shared counter `next`, sorted and summed in the thread's own scratch memory. A column's sums do
 * not depend on which thread (or how many) did the work. */
typedef struct {
    const char *base, *lbase;
    Py_ssize_t rs, cs, ls, n, first, width, lo, hi;
    uint64_t *keys, *any, *all, *top;
    const int *bits;
    Py_ssize_t *next;
    Sums *sums;
    Scratch scratch;
    int phase;
} Job;

static void build_keys(Job *job) {
    Py_ssize_t n = job->n, width = job->width;
    memset(job->any, 0, (size_t)width * sizeof *job->any);
    memset(job->top, 0, (size_t)width * sizeof *job->top);
    memset(job->all, 0xff, (size_t)width * sizeof *job->all);
    for (Py_ssize_t i = job->lo; i < job->hi; i++) {
        const char *row = job->base + i * job->rs + job->first * job->cs;
        long long label;
        memcpy(&label, job->lbase + i * job->ls, sizeof label);
        for (Py_ssize_t j = 0; j < width; j++) {
            uint64_t b = bits_of(row, job->cs, j);
            job->any[j] |= b;
            job->all[j] &= b;
            if (b > job->top[j]) job->top[j] = b;
            job->keys[j * n + i] = (b << 1) | (label == job->first + j);
        }
    }
}

static void sum_columns(Job *job) {
    Py_ssize_t n = job->n;
    for (;;) {
        Py_ssize_t j = __atomic_fetch_add(job->next, 1, __ATOMIC_RELAXED);
        if (j >= job->width) return;
        Scratch *s = &job->scratch;
        job->sums[job->first + j] = key_sums(job->keys + j * n, s->spare, n, job->bits[j], s->counts, s->starts);
    }
}

static void *run_job(void *arg) {
    Job *job = arg;
    if (job->phase == 0) build_keys(job);
    else sum_columns(job);
    return NULL;
}

static void run_jobs(Job *jobs, int count) { run_jobs_on_threads(jobs, sizeof *jobs, count, run_job); }

/* Every block of columns: keys on `threads` threads by rows, then sums by columns. 0, or 1 when a score is negative
 * or NaN (the caller takes the per-column path). */
static int block_sums(Job *jobs, int threads, Py_ssize_t classes, Py_ssize_t block, int *bits) {
    Py_ssize_t n = jobs[0].n, next = 0;
    for (Py_ssize_t first = 0; first < classes; first += block) {
        Py_ssize_t width = classes - first < block ? classes - first : block;
        for (int t = 0; t < threads; t++) {
            jobs[t].first = first;
            jobs[t].width = width;
            jobs[t].lo = n * t / threads;
            jobs[t].hi = n * (t + 1) / threads;
            jobs[t].phase = 0;
        }
        run_jobs(jobs, threads);
        for (Py_ssize_t j = 0; j < width; j++) {
            uint64_t any = 0, all = ~(uint64_t)0, top = 0;
            for (int t = 0; t < threads; t++) {
                any |= jobs[t].any[j];
                all &= jobs[t].all[j];
                if (jobs[t].top[j] > top) top = jobs[t].top[j];
            }
            if ((any & SIGN_BIT) || top > INF_BITS) return 1;
            bits[j] = varying_bits(any, all);
        }
        next = 0;
        for (int t = 0; t < threads; t++) {
            jobs[t].next = &next;
            jobs[t].phase = 1;
        }
        run_jobs(jobs, threads < width ? threads : (int)width);
    }
    return 0;
}

static PyObject *class_curve_sums(PyObject *self, PyObject *args) {
    PyObject *scores_obj, *labels_obj;
    int threads = 1;
    if (!PyArg_ParseTuple(args, "OO|i", &scores_obj, &labels_obj, &threads)) return NULL;
    Py_buffer sv, lv;
    if (float64_buffer(scores_obj, &sv, 2, "scores") < 0) return NULL;
    if (PyObject_GetBuffer(labels_obj, &lv, PyBUF_STRIDED_RO | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&sv);
        return NULL;
    }
    PyObject *result = NULL;
    Job jobs[MAX_THREADS];
    memset(jobs, 0, sizeof jobs);
    Sums *sums = NULL;
    int *bits = NULL;
    uint64_t *keys = NULL;
    const char *format = lv.format;
    if (format != NULL && (format[0] == '<' || format[0] == '=' || format[0] == '@')) format++;
    if (lv.ndim != 1 || lv.itemsize != 8 || format == NULL || (strcmp(format, "q") != 0 && strcmp(format, "l") != 0) ||
        lv.shape[0] != sv.shape[0]) {
        PyErr_SetString(PyExc_TypeError, "labels: expected a 1-D int64 buffer with one label per row of scores");
        goto done;
    }
    Py_ssize_t n = sv.shape[0], classes = sv.shape[1];
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (threads > n) threads = n > 0 ? (int)n : 1;
    Py_ssize_t block = n > 0 ? BLOCK_KEYS / n : classes;
    if (block < threads) block = threads; /* a column for every thread */
    if (block > classes) block = classes;
    if (block < 1) block = 1;
    sums = PyMem_Calloc(classes > 0 ? classes : 1, sizeof *sums);
    bits = PyMem_Calloc((size_t)block, sizeof *bits);
    keys = PyMem_Malloc((size_t)(n * block > 0 ? n * block : 1) * sizeof *keys);
    if (sums == NULL || bits == NULL || keys == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (int t = 0; t < threads; t++) {
        Job *job = &jobs[t];
        job->base = sv.buf;
        job->lbase = lv.buf;
        job->rs = sv.strides[0];
        job->cs = sv.strides[1];
        job->ls = lv.strides[0];
        job->n = n;
        job->keys = keys;
        job->bits = bits;
        job->sums = sums;
        job->any = PyMem_Malloc((size_t)block * sizeof *job->any);
        job->all = PyMem_Malloc((size_t)block * sizeof *job->all);
        job->top = PyMem_Malloc((size_t)block * sizeof *job->top);
        if (job->any == NULL || job->all == NULL || job->top == NULL || scratch_alloc(&job->scratch, 0, n) < 0) {
            PyErr_NoMemory();
            goto done;
        }
    }
    int rejected;
    Py_BEGIN_ALLOW_THREADS
    rejected = block_sums(jobs, threads, classes, block, bits);
    Py_END_ALLOW_THREADS
    if (rejected) {
        Py_INCREF(Py_None);
        result = Py_None;
        goto done;
    }
    result = PyList_New(classes);
    for (Py_ssize_t c = 0; result != NULL && c < classes; c++) {
        PyObject *item = sums_tuple(sums[c]);
        if (item == NULL) Py_CLEAR(result);
        else PyList_SET_ITEM(result, c, item);
    }
done:
    for (int t = 0; t < MAX_THREADS; t++) {
        scratch_free(&jobs[t].scratch);
        PyMem_Free(jobs[t].any);
        PyMem_Free(jobs[t].all);
        PyMem_Free(jobs[t].top);
    }
    PyMem_Free(sums);
    PyMem_Free(bits);
    PyMem_Free(keys);
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
