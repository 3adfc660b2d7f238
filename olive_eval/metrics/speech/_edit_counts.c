/* Speech edit counts in C: the optional compiled form of olive_eval.metrics.speech.alignment's kernels.
 *
 * counts(references, predictions, chars[, threads]) -> (bytearray of int64 [N, 4] (H, S, D, I), list of fallback rows)
 *
 *   references, predictions  lists of str, the same length (the caller checks both)
 *   chars                    false: jiwer 4's words (whitespace runs of two or more and single spaces separate
 *                            words, the ends are stripped, a lone tab or newline stays inside its word); true:
 *                            jiwer 4's CER tokens (every code point of the stripped text)
 *
 * The counts are those of rapidfuzz's Levenshtein.editops(reference, prediction) as jiwer reads them: rapidfuzz
 * drops the common prefix and suffix (hits), computes Hyyro's bit-parallel matrix of the rest (pattern: the
 * reference) and walks back from the end preferring a deletion, then an insertion, then the diagonal. This file
 * computes the same matrix (the vertical deltas are a property of the DP matrix, however they are computed) and
 * takes the same walk, so the split into S, D and I is rapidfuzz's, not just any optimal one. Words are compared
 * exactly (rapidfuzz compares 64-bit hashes). Where rapidfuzz would switch to Hirschberg's algorithm (a matrix of
 * a megabyte or more) the row is left to the Python path: its index is in the returned list.
 *
 * The GIL is released while counting (the strings are held by a tuple copy of each list); `threads` (default 1,
 * at most 16) splits the pairs into that many ranges counted side by side, each with its own scratch memory.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../run_jobs.h"

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t length;
} Text;

typedef struct {
    Py_ssize_t start, length;
    uint64_t hash;
} Token;

/* Scratch memory reused from pair to pair (raw allocator: usable without the GIL). */
typedef struct {
    Token *ref, *hyp;
    Py_ssize_t tokens_cap_ref, tokens_cap_hyp;
    int64_t *rid, *hid, *slots;
    Py_ssize_t ids_cap_ref, ids_cap_hyp, slots_cap;
    uint64_t *peq, *matrix;
    size_t peq_cap, matrix_cap;
} Scratch;

static int grow(void **p, size_t *cap, size_t need, size_t item) {
    if (need <= *cap) return 0;
    size_t cap2 = need > 2 * *cap ? need : 2 * *cap;
    void *q = PyMem_RawRealloc(*p, cap2 * item);
    if (q == NULL) return -1;
    *p = q;
    *cap = cap2;
    return 0;
}

#define GROW(ptr, cap, need) grow((void **)&(ptr), (size_t *)&(cap), (size_t)(need), sizeof(*(ptr)))

#define INLINE static inline __attribute__((always_inline))

static inline Py_UCS4 at(const Text *t, Py_ssize_t i) { return PyUnicode_READ(t->kind, t->data, i); }

/* The kernels below take the kind as a constant, so that each string width gets its own loop. */
INLINE Py_UCS4 read_k(const void *data, Py_ssize_t i, const int kind) { return PyUnicode_READ(kind, data, i); }

INLINE void push_k(Token *tokens, Py_ssize_t *n, const void *data, Py_ssize_t start, Py_ssize_t end, const int kind) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (Py_ssize_t i = start; i < end; i++) h = (h ^ read_k(data, i, kind)) * 0x100000001b3ULL;
    tokens[*n].start = start;
    tokens[*n].length = end - start;
    tokens[*n].hash = h ^ (uint64_t)(end - start);
    (*n)++;
}

INLINE int space_k(const void *data, Py_ssize_t i, const int kind) {
    return Py_UNICODE_ISSPACE(read_k(data, i, kind));
}

/* Tokens of the text into tokens (room for its length); returns their number. */
INLINE Py_ssize_t tokenize_k(const void *data, Py_ssize_t length, Token *tokens, int chars, const int kind) {
    Py_ssize_t begin = 0, end = length, n = 0;
    while (begin < end && space_k(data, begin, kind)) begin++;
    while (end > begin && space_k(data, end - 1, kind)) end--;
    if (chars) {
        for (Py_ssize_t i = begin; i < end; i++) push_k(tokens, &n, data, i, i + 1, kind);
        return n;
    }
    /* one pass: each word's hash is built while it is read */
    Py_ssize_t word = begin, i = begin;
    uint64_t h = 0xcbf29ce484222325ULL;
    while (i < end) {
        Py_UCS4 c = read_k(data, i, kind);
        if (!Py_UNICODE_ISSPACE(c)) {
            h = (h ^ c) * 0x100000001b3ULL;
            i++;
            continue;
        }
        Py_ssize_t k = i + 1;
        while (k < end && space_k(data, k, kind)) k++;
        if (k - i >= 2 || c == ' ') { /* a separator; a lone tab or newline stays in its word */
            tokens[n].start = word;
            tokens[n].length = i - word;
            tokens[n].hash = h ^ (uint64_t)(i - word);
            n++;
            word = k;
            h = 0xcbf29ce484222325ULL;
        } else {
            h = (h ^ c) * 0x100000001b3ULL;
        }
        i = k;
    }
    if (word < end) {
        tokens[n].start = word;
        tokens[n].length = end - word;
        tokens[n].hash = h ^ (uint64_t)(end - word);
        n++;
    }
    return n;
}

static Py_ssize_t tokenize(const Text *t, Token *tokens, int chars) {
    switch (t->kind) {
    case PyUnicode_1BYTE_KIND:
        return tokenize_k(t->data, t->length, tokens, chars, PyUnicode_1BYTE_KIND);
    case PyUnicode_2BYTE_KIND:
        return tokenize_k(t->data, t->length, tokens, chars, PyUnicode_2BYTE_KIND);
    default:
        return tokenize_k(t->data, t->length, tokens, chars, PyUnicode_4BYTE_KIND);
    }
}

static int same_token(const Text *a, const Token *x, const Text *b, const Token *y) {
    if (x->hash != y->hash || x->length != y->length) return 0;
    if (a->kind == b->kind)
        return memcmp((const char *)a->data + x->start * a->kind, (const char *)b->data + y->start * b->kind,
                      (size_t)x->length * (size_t)a->kind) == 0;
    for (Py_ssize_t i = 0; i < x->length; i++)
        if (at(a, x->start + i) != at(b, y->start + i)) return 0;
    return 1;
}

static inline int test_bit(const uint64_t *bits, size_t blocks, Py_ssize_t row, Py_ssize_t col) {
    return (int)((bits[(size_t)row * blocks + (size_t)col / 64] >> (col % 64)) & 1u);
}

/* Counts of one pair into out[4]; 1 when it must go to the Python path, -1 when out of memory. */
static int pair_counts(const Text *rt, const Text *ht, int chars, Scratch *s, int64_t *out) {
    memset(out, 0, 4 * sizeof(int64_t));
    if (GROW(s->ref, s->tokens_cap_ref, rt->length + 1) || GROW(s->hyp, s->tokens_cap_hyp, ht->length + 1))
        return -1;
    Py_ssize_t n = tokenize(rt, s->ref, chars), m = tokenize(ht, s->hyp, chars);
    Token *r = s->ref, *h = s->hyp;
    Py_ssize_t prefix = 0;
    while (prefix < n && prefix < m && same_token(rt, &r[prefix], ht, &h[prefix])) prefix++;
    Py_ssize_t suffix = 0;
    while (suffix < n - prefix && suffix < m - prefix &&
           same_token(rt, &r[n - 1 - suffix], ht, &h[m - 1 - suffix]))
        suffix++;
    r += prefix;
    h += prefix;
    n -= prefix + suffix;
    m -= prefix + suffix;
    out[0] = prefix + suffix;
    if (n == 0 || m == 0) {
        out[2] = n;
        out[3] = m;
        return 0;
    }
    /* rapidfuzz's levenshtein_align_hirschberg: Hirschberg for a matrix of 1 MiB or more */
    if ((size_t)2 * (size_t)n * (size_t)m / 8 >= 1024 * 1024 && n >= 65 && m >= 10) return 1;

    /* ids: distinct reference tokens 0..k-1; a prediction token not in the reference is -1 */
    size_t slots = 16;
    while (slots < (size_t)(2 * n)) slots *= 2;
    if (GROW(s->slots, s->slots_cap, slots) || GROW(s->rid, s->ids_cap_ref, n) || GROW(s->hid, s->ids_cap_hyp, m))
        return -1;
    for (size_t i = 0; i < slots; i++) s->slots[i] = -1; /* slot -> index of a reference token */
    int64_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t j = (size_t)r[i].hash & (slots - 1);
        while (s->slots[j] >= 0 && !same_token(rt, &r[s->slots[j]], rt, &r[i])) j = (j + 1) & (slots - 1);
        if (s->slots[j] < 0) {
            s->slots[j] = i;
            s->rid[i] = k++;
        } else {
            s->rid[i] = s->rid[s->slots[j]];
        }
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        size_t j = (size_t)h[i].hash & (slots - 1);
        while (s->slots[j] >= 0 && !same_token(rt, &r[s->slots[j]], ht, &h[i])) j = (j + 1) & (slots - 1);
        s->hid[i] = s->slots[j] < 0 ? -1 : s->rid[s->slots[j]];
    }
    size_t blocks = ((size_t)n + 63) / 64;
    if (GROW(s->peq, s->peq_cap, (size_t)k * blocks) || GROW(s->matrix, s->matrix_cap, 2 * (size_t)m * blocks))
        return -1;
    memset(s->peq, 0, (size_t)k * blocks * sizeof(uint64_t));
    for (Py_ssize_t i = 0; i < n; i++) s->peq[(size_t)s->rid[i] * blocks + (size_t)i / 64] |= 1ULL << (i % 64);

    /* Hyyro's recurrence over the whole column (the blocks are one big integer: carries between words) */
    uint64_t *vp_rows = s->matrix, *vn_rows = s->matrix + (size_t)m * blocks;
    for (size_t w = 0; w < blocks; w++) {
        vp_rows[w] = ~0ULL; /* row -1: D[i][0] = i, every vertical delta +1 */
        vn_rows[w] = 0;
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        const uint64_t *pm = s->hid[j] < 0 ? NULL : s->peq + (size_t)s->hid[j] * blocks;
        const uint64_t *vp_prev = j ? vp_rows + (size_t)(j - 1) * blocks : vp_rows;
        const uint64_t *vn_prev = j ? vn_rows + (size_t)(j - 1) * blocks : vn_rows;
        uint64_t *vp = vp_rows + (size_t)j * blocks, *vn = vn_rows + (size_t)j * blocks;
        uint64_t add_carry = 0, hp_carry = 1, hn_carry = 0;
        for (size_t w = 0; w < blocks; w++) {
            uint64_t VP = vp_prev[w], VN = vn_prev[w];
            uint64_t X = (pm ? pm[w] : 0) | VN;
            uint64_t xv = X & VP;
            uint64_t t = xv + VP;
            uint64_t c1 = t < xv;
            uint64_t sum = t + add_carry;
            add_carry = c1 | (sum < t);
            uint64_t D0 = (sum ^ VP) | X;
            uint64_t HP = VN | ~(D0 | VP);
            uint64_t HN = VP & D0;
            uint64_t HPs = (HP << 1) | hp_carry;
            uint64_t HNs = (HN << 1) | hn_carry;
            hp_carry = HP >> 63;
            hn_carry = HN >> 63;
            vn[w] = HPs & D0;
            vp[w] = HNs | ~(D0 | HPs);
        }
    }
    /* rapidfuzz's walk back: deletion, else insertion, else the diagonal (a hit or a substitution) */
    Py_ssize_t row = m, col = n;
    int64_t hits = 0, subs = 0, dels = 0, ins = 0;
    while (row && col) {
        if (test_bit(vp_rows, blocks, row - 1, col - 1)) {
            dels++;
            col--;
        } else {
            row--;
            if (row && test_bit(vn_rows, blocks, row - 1, col - 1)) {
                ins++;
            } else {
                col--;
                if (s->rid[col] == s->hid[row]) hits++;
                else subs++;
            }
        }
    }
    out[0] += hits;
    out[1] = subs;
    out[2] = dels + col;
    out[3] = ins + row;
    return 0;
}

static int open_text(PyObject *o, Text *t) {
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "expected str, got %.80s", Py_TYPE(o)->tp_name);
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(o) < 0) return -1;
#endif
    t->kind = PyUnicode_KIND(o);
    t->data = PyUnicode_DATA(o);
    t->length = PyUnicode_GET_LENGTH(o);
    return 0;
}

/* A range of pairs counted by one thread, with its own scratch memory; its late rows go to late[lo...]. */
typedef struct {
    const Text *texts;
    Py_ssize_t lo, hi, n_late;
    int chars, failed;
    int64_t *rows;
    Py_ssize_t *late;
} Job;


static void *run_job(void *arg) {
    Job *job = arg;
    Scratch s;
    memset(&s, 0, sizeof(s));
    job->n_late = 0;
    job->failed = 0;
    for (Py_ssize_t i = job->lo; i < job->hi && !job->failed; i++) {
        int status = pair_counts(&job->texts[2 * i], &job->texts[2 * i + 1], job->chars, &s, job->rows + 4 * i);
        if (status < 0) job->failed = 1;
        else if (status > 0) job->late[job->lo + job->n_late++] = i;
    }
    PyMem_RawFree(s.ref);
    PyMem_RawFree(s.hyp);
    PyMem_RawFree(s.rid);
    PyMem_RawFree(s.hid);
    PyMem_RawFree(s.slots);
    PyMem_RawFree(s.peq);
    PyMem_RawFree(s.matrix);
    return NULL;
}

static void run_jobs(Job *jobs, int count) { run_jobs_on_threads(jobs, sizeof *jobs, count, run_job); }

static PyObject *counts(PyObject *self, PyObject *args) {
    PyObject *ref_list, *hyp_list;
    int chars, threads = 1;
    if (!PyArg_ParseTuple(args, "OOp|i", &ref_list, &hyp_list, &chars, &threads)) return NULL;
    PyObject *refs = PySequence_Tuple(ref_list), *hyps = refs ? PySequence_Tuple(hyp_list) : NULL;
    PyObject *out = NULL, *fallback = NULL, *result = NULL;
    Text *texts = NULL;
    Py_ssize_t *late = NULL;
    if (hyps == NULL) goto done;
    Py_ssize_t n = PyTuple_GET_SIZE(refs);
    if (PyTuple_GET_SIZE(hyps) != n) {
        PyErr_SetString(PyExc_ValueError, "references and predictions differ in length");
        goto done;
    }
    texts = PyMem_Malloc((size_t)(2 * n + 1) * sizeof(Text));
    late = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(4 * n * (Py_ssize_t)sizeof(int64_t)));
    if (texts == NULL || late == NULL) PyErr_NoMemory();
    if (texts == NULL || late == NULL || out == NULL) goto done;
    for (Py_ssize_t i = 0; i < n; i++)
        if (open_text(PyTuple_GET_ITEM(refs, i), &texts[2 * i]) < 0 ||
            open_text(PyTuple_GET_ITEM(hyps, i), &texts[2 * i + 1]) < 0)
            goto done;
    int64_t *rows = (int64_t *)PyByteArray_AS_STRING(out);
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (threads > n) threads = n > 0 ? (int)n : 1;
    Job jobs[MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        jobs[t].texts = texts;
        jobs[t].lo = n * t / threads;
        jobs[t].hi = n * (t + 1) / threads;
        jobs[t].chars = chars;
        jobs[t].rows = rows;
        jobs[t].late = late;
    }
    Py_BEGIN_ALLOW_THREADS
    run_jobs(jobs, threads);
    Py_END_ALLOW_THREADS
    int failed = 0;
    Py_ssize_t n_late = 0;
    for (int t = 0; t < threads; t++) { /* each job's late rows sit at the start of its own range */
        failed |= jobs[t].failed;
        for (Py_ssize_t i = 0; i < jobs[t].n_late; i++) late[n_late++] = late[jobs[t].lo + i];
    }
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    fallback = PyList_New(n_late);
    if (fallback == NULL) goto done;
    for (Py_ssize_t i = 0; i < n_late; i++) {
        PyObject *index = PyLong_FromSsize_t(late[i]);
        if (index == NULL) goto done;
        PyList_SET_ITEM(fallback, i, index);
    }
    result = PyTuple_Pack(2, out, fallback);
done:
    PyMem_Free(texts);
    PyMem_Free(late);
    Py_XDECREF(refs);
    Py_XDECREF(hyps);
    Py_XDECREF(out);
    Py_XDECREF(fallback);
    return result;
}

static PyMethodDef methods[] = {
    {"counts", counts, METH_VARARGS,
     "counts(references, predictions, chars[, threads]) -> (bytearray of int64 [N, 4] H, S, D, I; rows left to Python)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_edit_counts",
                                    "jiwer 4's word and character edit counts (rapidfuzz's alignment), in C.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__edit_counts(void) { return PyModule_Create(&module); }
