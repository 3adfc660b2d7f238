/* COCOeval.accumulate in C: the optional compiled form of coco.accumulate's TP walk and precision envelope.
 *
 *   accumulate(det_category, det_score, det_rank, out_of_range, hit_det, hit_slice, hit_tp, hit_not_fp, npig,
 *              rec_thresholds, max_dets, n_thr, n_area) -> (precision, recall): float64 bytearrays laid out
 *              [T, R, K, A, M] and [T, K, A, M], -1 where a category has no ground truth in an area range
 *
 * det_category [N] int64 in [0, K) (K = len(npig) / A), det_score [N] float64 (no NaN; -0.0 ties with 0.0),
 * det_rank [N] int64 (rank in its image and category),
 * out_of_range [N, A] uint8; the matches that are a TP or no FP: hit_det [P] int64, hit_slice [P] int64
 * (area range * T + IoU threshold), hit_tp and hit_not_fp [P] uint8, at most one per (detection, slice);
 * npig [K, A] int64; rec_thresholds [R] float64 ascending; max_dets [M] int64.
 *
 * The detections are ranked as pycocotools concatenates and sorts them: by category, then score descending, ties
 * in input order (a stable counting sort by category, then each category's score keys sorted in cache: the order
 * of np.lexsort((-score, category))). Per (area range, IoU threshold, category) segment the matches are walked
 * in that order. A detection that is not matched counts as an FP when it is in range and within maxDet, so the
 * FPs before a TP are the counted in-range detections before it in its category (one prefix count per area range
 * and maxDet) less the matches before it that are no FP. At each TP, precision = tp / (fp + tp + eps) in pycocotools' operation order; only
 * TPs can raise the envelope, so the value read at each recall threshold is the maximum over the TPs from the
 * first one whose recall tp / npig reaches it (a running maximum from the right), 0 past the last. The same
 * divisions and maxima as the numpy form, so the arrays are bit-identical.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Py_buffer view;
    Py_ssize_t n;
} Array;

static int get(PyObject *obj, Array *a, Py_ssize_t itemsize) {
    if (PyObject_GetBuffer(obj, &a->view, PyBUF_C_CONTIGUOUS) < 0) return 0;
    if (a->view.itemsize != itemsize) {
        PyBuffer_Release(&a->view);
        PyErr_Format(PyExc_TypeError, "accumulate: an array must hold %zd-byte items", itemsize);
        return 0;
    }
    a->n = a->view.len / itemsize;
    return 1;
}

typedef struct {
    int64_t pos;  /* position in the ranked order */
    int64_t rank; /* the detection's rank in its image and category */
    unsigned char tp, not_fp;
} Hit;

#define DIGIT 11
#define BUCKETS (1 << DIGIT)
#define PASSES 6 /* 6 * 11 >= 64 */

/* An unsigned key that sorts ascending as the score descends (0.0 and -0.0 one key: numpy's argsort ties them). */
static uint64_t descending(double score) {
    uint64_t u;
    if (score == 0.0) score = 0.0;
    memcpy(&u, &score, sizeof u);
    return (u >> 63) ? u : ~(u | ((uint64_t)1 << 63));
}

/* Keys k[0..n) and their rows v[0..n) by key, stable, in place; tk/tv [n / 2] scratch: a top-down merge sort,
 * insertion for a few rows. */
static void merge_sort(uint64_t *k, int64_t *v, uint64_t *tk, int64_t *tv, size_t n) {
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            uint64_t key = k[i];
            int64_t row = v[i];
            size_t j = i;
            for (; j > 0 && k[j - 1] > key; j--) {
                k[j] = k[j - 1];
                v[j] = v[j - 1];
            }
            k[j] = key;
            v[j] = row;
        }
        return;
    }
    size_t half = n / 2, i = 0, j = half, o = 0;
    merge_sort(k, v, tk, tv, half);
    merge_sort(k + half, v + half, tk, tv, n - half);
    if (k[half - 1] <= k[half]) return; /* already in order */
    memcpy(tk, k, half * sizeof *k);
    memcpy(tv, v, half * sizeof *v);
    while (i < half && j < n) {
        int right = k[j] < tk[i]; /* equal keys: the left (earlier) row first */
        k[o] = right ? k[j] : tk[i];
        v[o++] = right ? v[j++] : tv[i++];
    }
    for (; i < half; i++, o++) {
        k[o] = tk[i];
        v[o] = tv[i];
    }
}

/* The same for many rows: an LSD radix sort (a pass skipped where every key shares its digit); k2/v2 [n]. */
static void radix_sort(uint64_t *k, int64_t *v, uint64_t *k2, int64_t *v2, size_t n, size_t (*count)[BUCKETS]) {
    uint64_t *k0 = k;
    int64_t *v0 = v;
    memset(count, 0, sizeof(size_t) * PASSES * BUCKETS);
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < PASSES; d++) count[d][(k[i] >> (d * DIGIT)) & (BUCKETS - 1)]++;
    for (int d = 0; d < PASSES; d++) {
        size_t *c = count[d], total = 0;
        if (c[(k[0] >> (d * DIGIT)) & (BUCKETS - 1)] == n) continue; /* one digit for all */
        for (int b = 0; b < BUCKETS; b++) {
            size_t here = c[b];
            c[b] = total;
            total += here;
        }
        for (size_t i = 0; i < n; i++) {
            size_t at = c[(k[i] >> (d * DIGIT)) & (BUCKETS - 1)]++;
            k2[at] = k[i];
            v2[at] = v[i];
        }
        uint64_t *kt = k;
        k = k2;
        k2 = kt;
        int64_t *vt = v;
        v = v2;
        v2 = vt;
    }
    if (k != k0) {
        memcpy(k0, k, n * sizeof *k);
        memcpy(v0, v, n * sizeof *v);
    }
}

/* The detections by (category, score descending), ties in input order: a stable counting sort by category into
 * slots (slot_of [n]: each detection's), then each category's score keys sorted in cache; order [n] gets the slots
 * in that order. cat_start [K + 1] holds each category's first slot; fill [K], key/key2 [n], idx2 [n] scratch. */
static void rank_detections(const double *score, const int64_t *cat, Py_ssize_t n, Py_ssize_t n_cat,
                            const int64_t *cat_start, int64_t *fill, int64_t *slot_of, int64_t *order, int64_t *idx2,
                            uint64_t *key, uint64_t *key2, size_t (*count)[BUCKETS]) {
    memcpy(fill, cat_start, (size_t)n_cat * sizeof *fill);
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t at = fill[cat[i]]++;
        key[at] = descending(score[i]);
        order[at] = slot_of[i] = at;
    }
    for (Py_ssize_t c = 0; c < n_cat; c++) {
        size_t lo = (size_t)cat_start[c], rows = (size_t)(cat_start[c + 1] - cat_start[c]);
        if (rows >= 2048) radix_sort(key + lo, order + lo, key2 + lo, idx2 + lo, rows, count);
        else merge_sort(key + lo, order + lo, key2 + lo, idx2 + lo, rows);
    }
}

/* How many of the recalls j / n (j = 1..n) lie below `thr`: numpy's searchsorted(rc, thr, side="left"). */
static int64_t below(int64_t n, double thr) {
    int64_t lo = 0, hi = n; /* the answer is in [lo, hi] */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((double)(mid + 1) / (double)n < thr) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static PyObject *accumulate(PyObject *self, PyObject *args) {
    PyObject *o[11];
    Py_ssize_t n_thr, n_area;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOnn", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7], &o[8],
                          &o[9], &o[10], &n_thr, &n_area))
        return NULL;
    static const Py_ssize_t sizes[11] = {8, 8, 8, 1, 8, 8, 1, 1, 8, 8, 8};
    Array a[11];
    int got = 0;
    PyObject *result = NULL, *p_out = NULL, *r_out = NULL;
    int64_t *cat_start = NULL, *det_hits = NULL, *seg_start = NULL, *before = NULL, *steps = NULL;
    int64_t *order = NULL, *idx = NULL, *fill = NULL, *slot_of = NULL;
    uint64_t *key = NULL;
    unsigned char *s_in = NULL, *in_c = NULL;
    size_t(*count)[BUCKETS] = NULL;
    Hit *hits = NULL;
    double *suf = NULL;
    for (; got < 11; got++)
        if (!get(o[got], &a[got], sizes[got])) goto done;
    const int64_t *cat = a[0].view.buf, *rank = a[2].view.buf;
    const double *score = a[1].view.buf, *rec = a[9].view.buf;
    const unsigned char *oor = a[3].view.buf, *h_tp = a[6].view.buf, *h_nf = a[7].view.buf;
    const int64_t *h_det = a[4].view.buf, *h_slice = a[5].view.buf, *npig = a[8].view.buf, *max_dets = a[10].view.buf;
    Py_ssize_t n = a[0].n, p = a[4].n, n_rec = a[9].n, n_md = a[10].n;
    if (n_thr < 1 || n_area < 1 || n_md < 1 || n_rec < 1 || a[1].n != n || a[2].n != n || a[3].n != n * n_area ||
        a[5].n != p || a[6].n != p || a[7].n != p || a[8].n % n_area) {
        PyErr_SetString(PyExc_ValueError, "accumulate: inconsistent array lengths");
        goto done;
    }
    Py_ssize_t n_cat = a[8].n / n_area, n_slice = n_area * n_thr, n_seg = n_slice * n_cat;
    Py_ssize_t p_len = n_thr * n_rec * n_cat * n_area * n_md, r_len = n_thr * n_cat * n_area * n_md;
    size_t n1 = (size_t)n + 1;
    cat_start = calloc((size_t)n_cat + 1, sizeof *cat_start);
    det_hits = malloc(((size_t)p + 1) * sizeof *det_hits);
    seg_start = calloc((size_t)n_seg + 1, sizeof *seg_start);
    hits = malloc(((size_t)p + 1) * sizeof *hits);
    before = malloc(n1 * sizeof *before);
    steps = malloc(((size_t)n_cat * n_area * n_rec + 1) * sizeof *steps);
    suf = malloc(((size_t)p + 1) * sizeof *suf);
    order = malloc(n1 * sizeof *order);
    idx = malloc(n1 * sizeof *idx);
    key = malloc(2 * n1 * sizeof *key);
    s_in = malloc(n1 * (size_t)n_area);
    in_c = malloc(n1 * (size_t)n_area);
    slot_of = malloc(n1 * sizeof *slot_of);
    count = malloc(sizeof(size_t) * PASSES * BUCKETS);
    fill = malloc(((size_t)n_cat + 1) * sizeof *fill);
    if (!cat_start || !det_hits || !seg_start || !hits || !before || !steps || !suf || !order || !idx ||
        !key || !s_in || !count || !fill || !in_c || !slot_of) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (cat[i] < 0 || cat[i] >= n_cat || score[i] != score[i]) {
            PyErr_SetString(PyExc_ValueError, "accumulate: a category is out of range, or a score is NaN");
            goto done;
        }
        cat_start[cat[i] + 1]++;
    }
    for (Py_ssize_t k = 0; k < n_cat; k++) cat_start[k + 1] += cat_start[k];
    for (Py_ssize_t h = 0; h < p; h++) {
        if (h_det[h] < 0 || h_det[h] >= n || h_slice[h] < 0 || h_slice[h] >= n_slice) {
            PyErr_SetString(PyExc_ValueError, "accumulate: a match's detection or slice is out of range");
            goto done;
        }
        seg_start[h_slice[h] * n_cat + cat[h_det[h]] + 1]++;
    }
    for (Py_ssize_t k = 0; k < n_cat * n_area; k++)
        if (npig[k] < 0) {
            PyErr_SetString(PyExc_ValueError, "accumulate: npig must not be negative");
            goto done;
        }
    if ((p_out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)8 * p_len)) == NULL ||
        (r_out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)8 * r_len)) == NULL)
        goto done;
    double *prec = (double *)PyByteArray_AS_STRING(p_out), *recall = (double *)PyByteArray_AS_STRING(r_out);

    Py_BEGIN_ALLOW_THREADS
    rank_detections(score, cat, n, n_cat, cat_start, fill, slot_of, order, idx, key, key + n1, count);
    /* the sort's keys are spent: their room holds the ranks in ranked order and the matches' offsets per slot */
    int64_t *s_rank = (int64_t *)key, *det_start = (int64_t *)(key + n1), *rank_c = before;
    memset(det_start, 0, n1 * sizeof *det_start);
    /* rank and in-range flags per slot (read in input order), then in ranked order (gathered within a category) */
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t at = slot_of[i];
        rank_c[at] = rank[i];
        for (Py_ssize_t ar = 0; ar < n_area; ar++) in_c[ar * n1 + at] = !oor[i * n_area + ar];
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t at = order[i];
        s_rank[i] = rank_c[at];
        for (Py_ssize_t ar = 0; ar < n_area; ar++) s_in[ar * n1 + i] = in_c[ar * n1 + at];
    }
    /* matches grouped by slot (slice, TP and no-FP packed), then laid out per segment in ranked order: a segment
     * fills as the positions of its category rise */
    for (Py_ssize_t h = 0; h < p; h++) det_start[slot_of[h_det[h]] + 1]++;
    for (Py_ssize_t d = 0; d < n; d++) det_start[d + 1] += det_start[d];
    for (Py_ssize_t h = 0; h < p; h++)
        det_hits[det_start[slot_of[h_det[h]]]++] = h_slice[h] * 4 + (h_tp[h] != 0) * 2 + (h_nf[h] != 0);
    for (Py_ssize_t s = 0; s < n_seg; s++) seg_start[s + 1] += seg_start[s];
    for (Py_ssize_t c = 0; c < n_cat; c++)
        for (int64_t i = cat_start[c]; i < cat_start[c + 1]; i++) {
            int64_t at = order[i]; /* det_start[at]: where slot at's matches end */
            for (int64_t j = at ? det_start[at - 1] : 0; j < det_start[at]; j++) {
                int64_t packed = det_hits[j];
                Hit *hit = &hits[seg_start[(packed >> 2) * n_cat + c]++]; /* seg_start[s]: where s ends */
                hit->pos = i;
                hit->rank = s_rank[i];
                hit->tp = (packed >> 1) & 1;
                hit->not_fp = packed & 1;
            }
        }
    for (Py_ssize_t k = 0; k < n_cat * n_area; k++)
        for (Py_ssize_t r = 0; r < n_rec; r++) steps[k * n_rec + r] = npig[k] ? below(npig[k], rec[r]) : 0;
    const double eps = DBL_EPSILON; /* np.spacing(1) */
    for (Py_ssize_t mi = 0; mi < n_md; mi++)
        for (Py_ssize_t ar = 0; ar < n_area; ar++) {
            /* before[i]: detections at ranked positions < i that are in range and within maxDet */
            const unsigned char *in = s_in + ar * n1;
            int64_t cap = max_dets[mi], run = 0;
            for (Py_ssize_t i = 0; i < n; i++) {
                before[i] = run;
                run += in[i] & (s_rank[i] < cap);
            }
            before[n] = run;
            for (Py_ssize_t t = 0; t < n_thr; t++)
                for (Py_ssize_t k = 0; k < n_cat; k++) {
                    Py_ssize_t s = (ar * n_thr + t) * n_cat + k, r_at = ((t * n_cat + k) * n_area + ar) * n_md + mi;
                    int64_t g = npig[k * n_area + ar], base = before[cat_start[k]], nf = 0, tp = 0;
                    double *q = prec + (t * n_rec * n_cat + k) * n_area * n_md + ar * n_md + mi;
                    Py_ssize_t q_step = n_cat * n_area * n_md; /* from one recall threshold to the next */
                    if (!g) {
                        recall[r_at] = -1.0;
                        for (Py_ssize_t r = 0; r < n_rec; r++) q[r * q_step] = -1.0;
                        continue;
                    }
                    for (int64_t j = s ? seg_start[s - 1] : 0; j < seg_start[s]; j++) {
                        const Hit *hit = &hits[j];
                        if (hit->rank >= cap) continue;
                        if (hit->tp) {
                            int64_t fp = before[hit->pos] - base - nf;
                            tp++;
                            double tpf = (double)tp;
                            suf[tp - 1] = tpf / ((double)fp + tpf + eps);
                        }
                        nf += hit->not_fp;
                    }
                    suf[tp] = 0.0; /* past the last TP */
                    for (int64_t j = tp - 1; j > 0; j--)
                        if (suf[j] > suf[j - 1]) suf[j - 1] = suf[j];
                    const int64_t *st = steps + (k * n_area + ar) * n_rec;
                    for (Py_ssize_t r = 0; r < n_rec; r++) q[r * q_step] = suf[st[r] < tp ? st[r] : tp];
                    recall[r_at] = (double)tp / (double)g;
                }
        }
    Py_END_ALLOW_THREADS
    result = PyTuple_Pack(2, p_out, r_out);
done:
    for (int k = 0; k < got; k++) PyBuffer_Release(&a[k].view);
    Py_XDECREF(p_out);
    Py_XDECREF(r_out);
    free(cat_start);
    free(det_hits);
    free(seg_start);
    free(hits);
    free(before);
    free(steps);
    free(suf);
    free(order);
    free(idx);
    free(key);
    free(s_in);
    free(in_c);
    free(slot_of);
    free(count);
    free(fill);
    return result;
}

static PyMethodDef methods[] = {
    {"accumulate", accumulate, METH_VARARGS, "COCOeval.accumulate: precision [T, R, K, A, M] and recall [T, K, A, M]."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_coco_accumulate", "COCOeval.accumulate in C.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__coco_accumulate(void) { return PyModule_Create(&module); }
