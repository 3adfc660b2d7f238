/* Rank statistics in C: the optional compiled form of olive_eval.metrics.regression.ranks.
 *
 *   average_ranks(x) -> bytearray of float64: 1-based ranks of x, ties given the mean of their ranks
 *   kendall_counts(x, y) -> (x_ties, y_ties, joint_ties, discordant): pair counts, Python ints
 *
 * x and y are float64 buffers of one dimension (strided: a column of a wider array is read in place), of the same
 * length, without NaN (the Python side checks). -0.0 and 0.0 are one value, as they compare equal.
 *
 * Values with at most 65536 distinct ones are ranked through a hash table and one sort of the distinct values.
 * Others are sorted by a least-significant-digit radix sort (8-bit digits, a digit that is the same in every word skipped) of
 * order-preserving 64-bit keys with each value's position packed into the low bits. Kendall's pairs are put in
 * (x, y) order by visiting x's groups of ties with y's dense ranks (or, when x has large groups of ties, by sorting
 * (x rank, y rank) packed into one word); discordant pairs are the inversions of y's dense ranks in that order,
 * counted one bit at a time: O(n log n).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "column.h"

#define DIGIT_BITS 8
#define BUCKETS (1 << DIGIT_BITS)

/* The key whose unsigned order is the order of the double; -0.0 maps to the key of 0.0. */
static inline uint64_t order_key(double v) {
    uint64_t bits;
    if (v == 0.0) v = 0.0;
    memcpy(&bits, &v, sizeof bits);
    return (bits & 0x8000000000000000ULL) ? ~bits : bits | 0x8000000000000000ULL;
}

static int bit_length(uint64_t v) {
    int bits = 0;
    while (v) {
        bits++;
        v >>= 1;
    }
    return bits;
}

/* Sort `a` (n values) on bits [low, 64), stably, by least-significant digit first; `spare` holds n values. A digit
 * that is the same in every value is skipped. Returns the buffer holding the result (a or spare). */
static uint64_t *radix_sort(uint64_t *a, uint64_t *spare, Py_ssize_t n, int low) {
    int digits = (64 - low + DIGIT_BITS - 1) / DIGIT_BITS;
    size_t counts[64 / DIGIT_BITS + 1][BUCKETS];
    memset(counts, 0, sizeof counts);
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t v = a[i];
        for (int d = 0; d < digits; d++) counts[d][(v >> (low + d * DIGIT_BITS)) & (BUCKETS - 1)]++;
    }
    uint64_t *src = a, *dst = spare;
    for (int d = 0; d < digits; d++) {
        size_t *c = counts[d];
        int shift = low + d * DIGIT_BITS;
        if (c[(src[0] >> shift) & (BUCKETS - 1)] == (size_t)n) continue; /* nothing would move */
        size_t total = 0;
        for (int b = 0; b < BUCKETS; b++) {
            size_t here = c[b];
            c[b] = total;
            total += here;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            uint64_t v = src[i];
            dst[c[(v >> shift) & (BUCKETS - 1)]++] = v;
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

typedef struct {
    uint64_t key;
    uint32_t at;
} Entry;

static int by_key(const void *a, const void *b) {
    uint64_t x = ((const Entry *)a)->key, y = ((const Entry *)b)->key;
    return (x > y) - (x < y);
}

/* Visits the values in ascending order, one group of equal values at a time: visit(group, size, state) gets the
 * positions of the group's values. Positions are packed below the value's high bits into one 64-bit word, so the
 * sort moves 8 bytes per value; values that share the high bits but differ below are sorted apart by their full
 * keys afterwards. */
typedef void (*Visit)(const uint32_t *group, Py_ssize_t size, void *state);

static int visit_groups(const Column *values, Visit visit, void *state) {
    Py_ssize_t n = values->n;
    if (n == 0) return 0;
    int low = bit_length((uint64_t)(n - 1));
    if (low == 0) low = 1;
    uint64_t mask = (1ULL << low) - 1;
    uint64_t *a = PyMem_Malloc((size_t)n * sizeof(uint64_t));
    uint64_t *spare = PyMem_Malloc((size_t)n * sizeof(uint64_t));
    uint32_t *group = PyMem_Malloc((size_t)n * sizeof(uint32_t));
    Entry *entries = NULL;
    Py_ssize_t capacity = 0;
    int failed = 0;
    if (!a || !spare || !group) {
        failed = 1;
        goto done;
    }
    uint64_t low_bits = 0; /* zero when no key has bits below the packed position: equal high bits are equal keys */
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t key = order_key(value_at(values, i));
        low_bits |= key & mask;
        a[i] = (key & ~mask) | (uint64_t)i;
    }
    uint64_t *sorted = radix_sort(a, spare, n, low);
    Py_ssize_t start = 0;
    while (start < n) {
        Py_ssize_t end = start + 1;
        uint64_t high = sorted[start] & ~mask;
        while (end < n && (sorted[end] & ~mask) == high) end++;
        Py_ssize_t size = end - start;
        if (size == 1 || low_bits == 0) {
            for (Py_ssize_t i = 0; i < size; i++) group[i] = (uint32_t)(sorted[start + i] & mask);
            visit(group, size, state);
            start = end;
            continue;
        }
        if (size > capacity) { /* values sharing the high bits: sort them by their full keys */
            PyMem_Free(entries);
            capacity = size > 2 * capacity ? size : 2 * capacity;
            entries = PyMem_Malloc((size_t)capacity * sizeof(Entry));
            if (!entries) {
                failed = 1;
                goto done;
            }
        }
        int all_equal = 1;
        for (Py_ssize_t i = 0; i < size; i++) {
            uint32_t at = (uint32_t)(sorted[start + i] & mask);
            entries[i].at = at;
            entries[i].key = order_key(value_at(values, at));
            all_equal &= entries[i].key == entries[0].key;
        }
        if (!all_equal) qsort(entries, (size_t)size, sizeof(Entry), by_key);
        Py_ssize_t first = 0;
        while (first < size) {
            Py_ssize_t last = first + 1;
            while (last < size && entries[last].key == entries[first].key) last++;
            for (Py_ssize_t i = first; i < last; i++) group[i - first] = entries[i].at;
            visit(group, last - first, state);
            first = last;
        }
        start = end;
    }
done:
    PyMem_Free(a);
    PyMem_Free(spare);
    PyMem_Free(group);
    PyMem_Free(entries);
    if (failed) PyErr_NoMemory();
    return failed ? -1 : 0;
}

/* Values with few distinct ones (ratings, rounded scores) ranked through a hash table instead of a sort, in two
 * passes over them and one sort of the distinct values: each value's dense rank, and per dense rank how many values
 * hold it. Returns the number of distinct values; 0 when there are more than FEW (or none): sort them instead. */
#define FEW (1 << 16)

typedef struct {
    uint64_t key; /* 0: empty (only a NaN, which the caller excludes, has the key 0) */
    uint32_t id;
} Slot;

static Py_ssize_t few_distinct(const Column *values, uint32_t *dense, uint32_t **counts_out) {
    Py_ssize_t n = values->n, m = 0;
    *counts_out = NULL;
    if (n == 0) return 0;
    Py_ssize_t limit = n < FEW ? n : FEW;
    int slot_bits = bit_length((uint64_t)(2 * limit - 1)); /* at least twice as many slots: short probes */
    size_t slots = (size_t)1 << slot_bits;
    Slot *table = PyMem_Calloc(slots, sizeof(Slot));
    Entry *distinct = PyMem_Malloc((size_t)limit * sizeof(Entry));
    uint32_t *counts = PyMem_Calloc((size_t)limit, sizeof(uint32_t));
    uint32_t *rank_of = PyMem_Malloc((size_t)limit * sizeof(uint32_t));
    uint32_t *ranked_counts = PyMem_Malloc((size_t)limit * sizeof(uint32_t));
    if (!table || !distinct || !counts || !rank_of || !ranked_counts) {
        m = -1;
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t key = order_key(value_at(values, i));
        size_t h = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - slot_bits));
        while (table[h].key != 0 && table[h].key != key) h = (h + 1) & (slots - 1);
        if (table[h].key == 0) {
            if (m == limit && limit == FEW) { /* too many distinct values: the caller sorts */
                m = 0;
                goto done;
            }
            table[h].key = key;
            table[h].id = (uint32_t)m;
            distinct[m].key = key;
            distinct[m].at = (uint32_t)m;
            m++;
        }
        dense[i] = table[h].id;
        counts[table[h].id]++;
    }
    qsort(distinct, (size_t)m, sizeof(Entry), by_key);
    for (Py_ssize_t r = 0; r < m; r++) {
        rank_of[distinct[r].at] = (uint32_t)r;
        ranked_counts[r] = counts[distinct[r].at];
    }
    for (Py_ssize_t i = 0; i < n; i++) dense[i] = rank_of[dense[i]];
    *counts_out = ranked_counts;
    ranked_counts = NULL;
done:
    PyMem_Free(table);
    PyMem_Free(distinct);
    PyMem_Free(counts);
    PyMem_Free(rank_of);
    PyMem_Free(ranked_counts);
    return m;
}

static long long tied_pairs(const uint32_t *counts, Py_ssize_t m) {
    long long pairs = 0;
    for (Py_ssize_t r = 0; r < m; r++) pairs += (long long)counts[r] * ((long long)counts[r] - 1) / 2;
    return pairs;
}

typedef struct {
    double *ranks;
    Py_ssize_t seen;
} RankState;

static void assign_average(const uint32_t *group, Py_ssize_t size, void *state) {
    RankState *s = state;
    double rank = 0.5 * (double)(2 * s->seen + 1 + size); /* the mean of ranks seen + 1 .. seen + size */
    for (Py_ssize_t i = 0; i < size; i++) s->ranks[group[i]] = rank;
    s->seen += size;
}

typedef struct {
    uint32_t *dense;
    uint32_t next;
    long long tied_pairs;
} DenseState;

static void assign_dense(const uint32_t *group, Py_ssize_t size, void *state) {
    DenseState *s = state;
    for (Py_ssize_t i = 0; i < size; i++) s->dense[group[i]] = s->next;
    s->next++;
    s->tied_pairs += (long long)size * (long long)(size - 1) / 2;
}

static PyObject *average_ranks(PyObject *self, PyObject *arg) {
    Column x;
    if (open_column(arg, &x) < 0) return NULL;
    Py_ssize_t n = x.n;
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    uint32_t *dense = PyMem_Malloc((n > 0 ? (size_t)n : 1) * sizeof(uint32_t));
    uint32_t *counts = NULL;
    double *mean_rank = NULL;
    int failed = out == NULL || dense == NULL;
    if (dense == NULL) PyErr_NoMemory();
    double *ranks = out ? (double *)PyByteArray_AS_STRING(out) : NULL;
    Py_ssize_t m = failed ? -1 : few_distinct(&x, dense, &counts);
    if (m > 0) { /* each distinct value's ranks: those after the smaller values' */
        mean_rank = PyMem_Malloc((size_t)m * sizeof(double));
        if (mean_rank == NULL) {
            PyErr_NoMemory();
            failed = 1;
        } else {
            double before = 0.0;
            for (Py_ssize_t r = 0; r < m; r++) {
                mean_rank[r] = before + 0.5 * ((double)counts[r] + 1.0);
                before += (double)counts[r];
            }
            for (Py_ssize_t i = 0; i < n; i++) ranks[i] = mean_rank[dense[i]];
        }
    } else if (m == 0) {
        RankState state = {ranks, 0};
        failed = visit_groups(&x, assign_average, &state) < 0;
    } else {
        failed = 1;
    }
    PyMem_Free(dense);
    PyMem_Free(counts);
    PyMem_Free(mean_rank);
    PyBuffer_Release(&x.view);
    if (failed) {
        Py_XDECREF(out);
        return NULL;
    }
    return out;
}

/* Inversions of a (pairs i < j with a[i] > a[j]) for values below 2**bits, from the most significant bit down:
 * within each group of values equal above the bit, a pair whose earlier value has the bit set and whose later one
 * has it clear is an inversion decided at this bit; then each group is split stably, clear bits first, so the groups
 * of the next bit are contiguous. Every pass streams through the values without branching on them. `spare` and
 * `ones` hold n values each. */
static long long inversions(uint32_t *a, uint32_t *spare, uint32_t *ones, Py_ssize_t n, int bits) {
    long long count = 0;
    uint32_t *src = a, *dst = spare;
    for (int level = bits - 1; level >= 0; level--) {
        Py_ssize_t i = 0;
        while (i < n) {
            uint32_t prefix = src[i] >> (level + 1);
            Py_ssize_t zeros = i, set = 0, j = i;
            long long seen = 0;
            for (; j < n && (src[j] >> (level + 1)) == prefix; j++) {
                uint32_t v = src[j], bit = (v >> level) & 1;
                dst[zeros] = v;
                ones[set] = v;
                zeros += !bit;
                set += bit;
                count += bit ? 0 : seen;
                seen += bit;
            }
            memcpy(dst + zeros, ones, (size_t)set * sizeof(uint32_t));
            i = j;
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    return count;
}

/* The y ranks in (x, y) order, built while visiting x's groups: a group of tied x values gets its y ranks sorted
 * (by insertion while it is small; a larger one makes the caller sort packed (x rank, y rank) words instead, from
 * the x ranks recorded on the way). */
#define SMALL_GROUP 32

typedef struct {
    const uint32_t *dense_y;
    uint32_t *dense_x;
    uint32_t next_x;
    uint32_t *sequence;
    Py_ssize_t filled;
    long long tied_pairs, joint_ties;
    int large;
} OrderState;

static void append_group(const uint32_t *group, Py_ssize_t size, void *state) {
    OrderState *s = state;
    s->tied_pairs += (long long)size * (long long)(size - 1) / 2;
    for (Py_ssize_t i = 0; i < size; i++) s->dense_x[group[i]] = s->next_x;
    s->next_x++;
    if (s->large) return;
    if (size > SMALL_GROUP) {
        s->large = 1;
        return;
    }
    uint32_t *out = s->sequence + s->filled;
    for (Py_ssize_t i = 0; i < size; i++) {
        uint32_t v = s->dense_y[group[i]];
        Py_ssize_t j = i;
        while (j > 0 && out[j - 1] > v) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = v;
    }
    for (Py_ssize_t i = 0; i < size;) {
        Py_ssize_t j = i + 1;
        while (j < size && out[j] == out[i]) j++;
        s->joint_ties += (long long)(j - i) * (long long)(j - i - 1) / 2;
        i = j;
    }
    s->filled += size;
}

/* The y ranks in (x, y) order through one sort of packed (x rank, y rank) words; sets the joint ties. */
static int sort_pairs(const OrderState *order, int y_bits, Py_ssize_t n, long long *joint_ties) {
    size_t size = n > 0 ? (size_t)n : 1;
    uint64_t *pairs = PyMem_Malloc(size * sizeof(uint64_t));
    uint64_t *spare = PyMem_Malloc(size * sizeof(uint64_t));
    if (!pairs || !spare) {
        PyMem_Free(pairs);
        PyMem_Free(spare);
        PyErr_NoMemory();
        return -1;
    }
    int used = y_bits + bit_length(order->next_x > 0 ? order->next_x - 1 : 0);
    int unused = 64 - (used > 0 ? used : 1); /* the words shifted up: the sort's digits cover the used bits */
    for (Py_ssize_t i = 0; i < n; i++)
        pairs[i] = (((uint64_t)order->dense_x[i] << y_bits) | order->dense_y[i]) << unused;
    uint64_t *sorted = n > 1 ? radix_sort(pairs, spare, n, unused) : pairs;
    uint64_t y_mask = (1ULL << y_bits) - 1;
    *joint_ties = 0;
    for (Py_ssize_t i = 0; i < n;) {
        Py_ssize_t j = i + 1;
        while (j < n && sorted[j] == sorted[i]) j++;
        *joint_ties += (long long)(j - i) * (long long)(j - i - 1) / 2;
        i = j;
    }
    for (Py_ssize_t i = 0; i < n; i++) order->sequence[i] = (uint32_t)((sorted[i] >> unused) & y_mask);
    PyMem_Free(pairs);
    PyMem_Free(spare);
    return 0;
}

static PyObject *kendall_counts(PyObject *self, PyObject *args) {
    PyObject *xo, *yo;
    if (!PyArg_ParseTuple(args, "OO", &xo, &yo)) return NULL;
    Column x, y;
    if (open_column(xo, &x) < 0) return NULL;
    if (open_column(yo, &y) < 0) {
        PyBuffer_Release(&x.view);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = x.n;
    size_t size = n > 0 ? (size_t)n : 1;
    uint32_t *dense_y = PyMem_Malloc(size * sizeof(uint32_t));
    uint32_t *sequence = PyMem_Malloc(size * sizeof(uint32_t));
    uint32_t *ones = PyMem_Malloc(size * sizeof(uint32_t));
    uint32_t *dense_x = PyMem_Malloc(size * sizeof(uint32_t));
    uint32_t *counts_x = NULL, *counts_y = NULL;
    if (y.n != n) {
        PyErr_SetString(PyExc_ValueError, "x and y differ in length");
        goto done;
    }
    if (!dense_y || !sequence || !ones || !dense_x) {
        PyErr_NoMemory();
        goto done;
    }
    DenseState sy = {dense_y, 0, 0};
    Py_ssize_t few_y = few_distinct(&y, dense_y, &counts_y);
    if (few_y < 0) goto done;
    if (few_y > 0) {
        sy.next = (uint32_t)few_y;
        sy.tied_pairs = tied_pairs(counts_y, few_y);
    } else if (visit_groups(&y, assign_dense, &sy) < 0) {
        goto done;
    }
    int y_bits = bit_length(sy.next > 0 ? sy.next - 1 : 0);
    OrderState order = {dense_y, dense_x, 0, sequence, 0, 0, 0, 0};
    Py_ssize_t few_x = few_distinct(&x, dense_x, &counts_x);
    if (few_x < 0) goto done;
    if (few_x > 0) { /* x's ranks known: its groups of ties are sorted by y in one sort of packed pairs */
        order.next_x = (uint32_t)few_x;
        order.tied_pairs = tied_pairs(counts_x, few_x);
        order.large = 1;
    } else if (visit_groups(&x, append_group, &order) < 0) {
        goto done;
    }
    if (order.large && sort_pairs(&order, y_bits, n, &order.joint_ties) < 0) goto done;
    long long discordant;
    Py_BEGIN_ALLOW_THREADS
    discordant = inversions(sequence, dense_y, ones, n, y_bits); /* dense_y is no longer needed: a spare buffer */
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(LLLL)", order.tied_pairs, sy.tied_pairs, order.joint_ties, discordant);
done:
    PyMem_Free(dense_y);
    PyMem_Free(sequence);
    PyMem_Free(ones);
    PyMem_Free(dense_x);
    PyMem_Free(counts_x);
    PyMem_Free(counts_y);
    PyBuffer_Release(&x.view);
    PyBuffer_Release(&y.view);
    return result;
}

static PyMethodDef methods[] = {
    {"average_ranks", average_ranks, METH_O, "1-based ranks of a float64 buffer, ties averaged (bytearray)."},
    {"kendall_counts", kendall_counts, METH_VARARGS, "(x_ties, y_ties, joint_ties, discordant) pair counts."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ranks", "Rank statistics in C.", -1, methods};

PyMODINIT_FUNC PyInit__ranks(void) { return PyModule_Create(&module); }
