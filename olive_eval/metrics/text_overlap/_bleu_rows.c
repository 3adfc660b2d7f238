/* BLEU's sentence statistics in C: the optional compiled form of bleu_statistics.BleuScorer.rows.
 *
 * rows(hypotheses, references, max_order, tokenize_13a) -> bytearray of int64 [N, 2 + 2 * max_order], or None.
 *
 *   hypotheses   list of str (lowercased already where the metric lowercases)
 *   references   list with, per example, a list of str (at least one)
 *   tokenize_13a true: sacrebleu's 13a tokenizer (below); false: the texts are tokenized already (any other
 *                sacrebleu tokenizer, applied in Python) and only split at whitespace
 *
 * A row is [hypothesis length, closest reference length, matches_1..N, totals_1..N], as bleu_statistics.sentence_row
 * computes it: each text's trailing whitespace dropped, tokenized, split at whitespace (Py_UNICODE_ISSPACE, what
 * str.split uses); the hypothesis's n-grams counted and each clipped to the most times one reference holds it; the
 * reference length closest to the hypothesis's (the shorter of two as close). Words are compared exactly (interned
 * to ids per example), n-grams as id sequences.
 *
 * 13a, as sacrebleu 2.x's Tokenizer13a and TokenizerRegexp do it, pass after pass on the output of the one before:
 * remove "<skipped>", remove "-\n", "\n" to " ", then (when the line holds '&') "&quot;", "&amp;", "&lt;", "&gt;" to
 * their characters (four str.replace passes, in that order); a space at both ends; then the four regexes, each a
 * left-to-right scan for non-overlapping matches of a fixed-width pattern (what re.sub does with such a pattern):
 *   ([\{-\~\[-\` -\&\(-\+\:-\@\/])  -> " \1 "
 *   ([^0-9])([\.,])                 -> "\1 \2 "
 *   ([\.,])([^0-9])                 -> " \1 \2"
 *   ([0-9])(-)                      -> "\1 \2 "
 *
 * None means the input needs the checked Python path (not a str, not a list, no reference, lengths differ).
 * The GIL is released while counting; the strings are held by copies of the lists.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t length;
} Text;

typedef struct {
    Py_UCS4 *data;
    size_t size, cap;
} Buf;

typedef struct {
    size_t start, length; /* in the example's arena */
    uint64_t hash;
} Token;

typedef struct {
    size_t start; /* the n-gram's first word in the hypothesis */
    uint64_t hash;
    int64_t count, most, current, last_ref;
} Entry;

static int grow(void **p, size_t *cap, size_t need, size_t item) {
    if (need <= *cap) return 0;
    size_t cap2 = need > 2 * *cap ? need : 2 * *cap;
    void *q = PyMem_RawRealloc(*p, cap2 * item);
    if (q == NULL) return -1;
    *p = q;
    *cap = cap2;
    return 0;
}

#define GROW(ptr, cap, need) grow((void **)&(ptr), &(cap), (size_t)(need), sizeof(*(ptr)))

typedef struct {
    Buf a, b, arena;
    Token *tokens;
    size_t tokens_cap;
    int64_t *ids;
    size_t ids_cap;
    int64_t *slots;
    size_t slots_cap;
    Entry *entries;
    size_t entries_cap;
    Py_ssize_t *lengths; /* each reference's number of words */
    size_t lengths_cap;
} Scratch;

static inline uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ULL; }
#define BASIS 0xcbf29ce484222325ULL

/* dst = src with every non-overlapping pat (left to right, no rescan) replaced by rep (str.replace). */
static int replace(const Buf *src, Buf *dst, const char *pat, const char *rep) {
    size_t np = strlen(pat), nr = strlen(rep);
    if (GROW(dst->data, dst->cap, src->size + 1)) return -1; /* never longer: rep is never longer than pat */
    size_t i = 0, o = 0;
    while (i < src->size) {
        if (src->data[i] == (Py_UCS4)(unsigned char)pat[0] && i + np <= src->size) {
            size_t k = 1;
            while (k < np && src->data[i + k] == (Py_UCS4)(unsigned char)pat[k]) k++;
            if (k == np) {
                for (size_t r = 0; r < nr; r++) dst->data[o++] = (Py_UCS4)(unsigned char)rep[r];
                i += np;
                continue;
            }
        }
        dst->data[o++] = src->data[i++];
    }
    dst->size = o;
    return 0;
}

static inline void swap(Buf *x, Buf *y) {
    Buf t = *x;
    *x = *y;
    *y = t;
}

static inline int has(const Buf *b, Py_UCS4 c) {
    for (size_t i = 0; i < b->size; i++)
        if (b->data[i] == c) return 1;
    return 0;
}

static inline int ascii_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }
static inline int period_comma(Py_UCS4 c) { return c == '.' || c == ','; }
static inline int r1_class(Py_UCS4 c) {
    return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
           (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == 0x2F;
}

/* sacrebleu's 13a of s->a (the text, trailing whitespace dropped); the result is left in s->a. */
static int tokenize_13a(Scratch *s) {
    if (has(&s->a, '<')) {
        if (replace(&s->a, &s->b, "<skipped>", "")) return -1;
        swap(&s->a, &s->b);
    }
    if (has(&s->a, '\n')) {
        if (replace(&s->a, &s->b, "-\n", "") || replace(&s->b, &s->a, "\n", " ")) return -1;
    }
    if (has(&s->a, '&')) {
        if (replace(&s->a, &s->b, "&quot;", "\"") || replace(&s->b, &s->a, "&amp;", "&") ||
            replace(&s->a, &s->b, "&lt;", "<") || replace(&s->b, &s->a, "&gt;", ">"))
            return -1;
    }
    size_t n = s->a.size;
    /* " line " and rule 1 in one pass: every class character becomes " c " (the two spaces too) */
    if (GROW(s->b.data, s->b.cap, 3 * (n + 2) + 1)) return -1;
    size_t o = 0;
    for (size_t i = 0; i < n + 2; i++) {
        Py_UCS4 c = (i == 0 || i == n + 1) ? ' ' : s->a.data[i - 1];
        if (r1_class(c)) {
            s->b.data[o++] = ' ';
            s->b.data[o++] = c;
            s->b.data[o++] = ' ';
        } else {
            s->b.data[o++] = c;
        }
    }
    s->b.size = o;
    /* rules 2, 3 and 4: two-character patterns, each a scan of the previous output */
    for (int rule = 2; rule <= 4; rule++) {
        Buf *src = &s->b, *dst = &s->a;
        if (GROW(dst->data, dst->cap, 2 * src->size + 1)) return -1;
        size_t i = 0, m = src->size;
        o = 0;
        while (i < m) {
            Py_UCS4 c = src->data[i];
            if (i + 1 < m) {
                Py_UCS4 d = src->data[i + 1];
                int hit = rule == 2 ? (!ascii_digit(c) && period_comma(d))
                                    : rule == 3 ? (period_comma(c) && !ascii_digit(d)) : (ascii_digit(c) && d == '-');
                if (hit) {
                    if (rule == 3) dst->data[o++] = ' ';
                    dst->data[o++] = c;
                    dst->data[o++] = ' ';
                    dst->data[o++] = d;
                    if (rule != 3) dst->data[o++] = ' ';
                    i += 2;
                    continue;
                }
            }
            dst->data[o++] = c;
            i++;
        }
        dst->size = o;
        swap(&s->a, &s->b);
    }
    swap(&s->a, &s->b); /* the result in a */
    return 0;
}

/* Read text (trailing whitespace dropped) into s->a, tokenize it, append its words to the arena and the tokens.
 * Returns the number of words, or -1 when out of memory. */
static Py_ssize_t words(const Text *t, int use_13a, Scratch *s, size_t *n_tokens) {
    Py_ssize_t end = t->length;
    while (end > 0 && Py_UNICODE_ISSPACE(PyUnicode_READ(t->kind, t->data, end - 1))) end--;
    if (GROW(s->a.data, s->a.cap, (size_t)end + 1)) return -1;
    for (Py_ssize_t i = 0; i < end; i++) s->a.data[i] = PyUnicode_READ(t->kind, t->data, i);
    s->a.size = (size_t)end;
    if (use_13a && tokenize_13a(s)) return -1;
    const Buf *b = &s->a;
    size_t base = s->arena.size;
    if (GROW(s->arena.data, s->arena.cap, base + b->size + 1)) return -1;
    memcpy(s->arena.data + base, b->data, b->size * sizeof(Py_UCS4));
    s->arena.size = base + b->size;
    Py_ssize_t count = 0;
    size_t i = 0;
    while (i < b->size) {
        while (i < b->size && Py_UNICODE_ISSPACE(b->data[i])) i++;
        if (i == b->size) break;
        size_t start = i;
        uint64_t h = BASIS;
        while (i < b->size && !Py_UNICODE_ISSPACE(b->data[i])) h = mix(h, b->data[i++]);
        if (GROW(s->tokens, s->tokens_cap, *n_tokens + 1)) return -1;
        Token *tok = &s->tokens[(*n_tokens)++];
        tok->start = base + start;
        tok->length = i - start;
        tok->hash = h ^ (uint64_t)(i - start);
        count++;
    }
    return count;
}

static inline int same_word(const Scratch *s, const Token *x, const Token *y) {
    return x->hash == y->hash && x->length == y->length &&
           memcmp(s->arena.data + x->start, s->arena.data + y->start, x->length * sizeof(Py_UCS4)) == 0;
}

static inline uint64_t gram_hash(const int64_t *ids, int n) {
    uint64_t h = BASIS;
    for (int k = 0; k < n; k++) h = mix(h, (uint64_t)ids[k]);
    return h;
}

/* One example's row. texts: the hypothesis, then its n_refs references. */
static int example_row(const Text *texts, Py_ssize_t n_refs, int max_order, int use_13a, Scratch *s, int64_t *row) {
    s->arena.size = 0;
    size_t n_tokens = 0;
    if (GROW(s->lengths, s->lengths_cap, (size_t)n_refs + 1)) return -1;
    Py_ssize_t size = words(&texts[0], use_13a, s, &n_tokens);
    if (size < 0) return -1;
    int64_t closest = -1;
    for (Py_ssize_t r = 0; r < n_refs; r++) {
        Py_ssize_t length = words(&texts[r + 1], use_13a, s, &n_tokens);
        if (length < 0) return -1;
        s->lengths[r] = length;
        int64_t diff = length > size ? length - size : size - length;
        int64_t best = closest > size ? closest - size : size - closest;
        if (closest < 0 || diff < best || (diff == best && length < closest)) closest = length;
    }
    row[0] = size;
    row[1] = closest;
    int64_t *matches = row + 2, *totals = row + 2 + max_order;
    for (int n = 1; n <= max_order; n++) {
        matches[n - 1] = 0;
        totals[n - 1] = size >= n ? size - n + 1 : 0;
    }
    if (size == 0) return 0;

    /* the hypothesis's words get ids 0..; a reference word the hypothesis lacks is -1 */
    size_t slots = 16;
    while (slots < 2 * (size_t)size) slots *= 2;
    if (GROW(s->slots, s->slots_cap, slots) || GROW(s->ids, s->ids_cap, n_tokens + 1) ||
        GROW(s->entries, s->entries_cap, (size_t)size + 1))
        return -1;
    for (size_t i = 0; i < slots; i++) s->slots[i] = -1;
    int64_t next = 0;
    for (size_t i = 0; i < n_tokens; i++) {
        const Token *tok = &s->tokens[i];
        size_t j = (size_t)tok->hash & (slots - 1);
        while (s->slots[j] >= 0 && !same_word(s, &s->tokens[s->slots[j]], tok)) j = (j + 1) & (slots - 1);
        if (s->slots[j] >= 0) {
            s->ids[i] = s->ids[s->slots[j]];
        } else if (i < (size_t)size) {
            s->slots[j] = (int64_t)i;
            s->ids[i] = next++;
        } else {
            s->ids[i] = -1;
        }
    }
    for (int n = 1; n <= max_order && n <= size; n++) {
        /* the hypothesis's n-grams, counted */
        size_t used = 0;
        for (size_t i = 0; i < slots; i++) s->slots[i] = -1;
        for (Py_ssize_t k = 0; k + n <= size; k++) {
            uint64_t h = gram_hash(s->ids + k, n);
            size_t j = (size_t)h & (slots - 1);
            while (s->slots[j] >= 0) {
                const Entry *e = &s->entries[s->slots[j]];
                if (e->hash == h && memcmp(s->ids + e->start, s->ids + k, (size_t)n * sizeof(int64_t)) == 0) break;
                j = (j + 1) & (slots - 1);
            }
            if (s->slots[j] >= 0) {
                s->entries[s->slots[j]].count++;
                continue;
            }
            Entry *e = &s->entries[used];
            e->start = (size_t)k;
            e->hash = h;
            e->count = 1;
            e->most = e->current = 0;
            e->last_ref = -1;
            s->slots[j] = (int64_t)used++;
        }
        /* each reference's counts of those n-grams; the most any one reference holds */
        size_t first = (size_t)size;
        for (Py_ssize_t r = 0; r < n_refs; r++) {
            const int64_t *ids = s->ids + first;
            for (Py_ssize_t k = 0; k + n <= s->lengths[r]; k++) {
                int known = 1;
                for (int q = 0; q < n; q++) known &= ids[k + q] >= 0;
                if (!known) continue;
                uint64_t h = gram_hash(ids + k, n);
                size_t j = (size_t)h & (slots - 1);
                while (s->slots[j] >= 0) {
                    Entry *e = &s->entries[s->slots[j]];
                    if (e->hash == h && memcmp(s->ids + e->start, ids + k, (size_t)n * sizeof(int64_t)) == 0) {
                        if (e->last_ref != r) {
                            e->last_ref = r;
                            e->current = 0;
                        }
                        if (++e->current > e->most) e->most = e->current;
                        break;
                    }
                    j = (j + 1) & (slots - 1);
                }
            }
            first += (size_t)s->lengths[r];
        }
        int64_t clipped = 0;
        for (size_t i = 0; i < used; i++) clipped += s->entries[i].count < s->entries[i].most ? s->entries[i].count
                                                                                                : s->entries[i].most;
        matches[n - 1] = clipped;
    }
    return 0;
}

static int open_text(PyObject *o, Text *t) {
    if (!PyUnicode_Check(o)) return -2;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(o) < 0) return -1;
#endif
    t->kind = PyUnicode_KIND(o);
    t->data = PyUnicode_DATA(o);
    t->length = PyUnicode_GET_LENGTH(o);
    return 0;
}

static void release(Scratch *s) {
    PyMem_RawFree(s->a.data);
    PyMem_RawFree(s->b.data);
    PyMem_RawFree(s->arena.data);
    PyMem_RawFree(s->tokens);
    PyMem_RawFree(s->ids);
    PyMem_RawFree(s->slots);
    PyMem_RawFree(s->entries);
    PyMem_RawFree(s->lengths);
}

static PyObject *rows(PyObject *self, PyObject *args) {
    PyObject *hyp_list, *ref_list;
    int max_order, use_13a;
    if (!PyArg_ParseTuple(args, "OOip", &hyp_list, &ref_list, &max_order, &use_13a)) return NULL;
    if (max_order < 1 || !PyList_Check(hyp_list) || !PyList_Check(ref_list) ||
        PyList_GET_SIZE(hyp_list) != PyList_GET_SIZE(ref_list))
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(hyp_list);
    /* every string, held by `held` while the GIL is released; per example its first text and reference count */
    PyObject *held = PyList_New(0), *out = NULL;
    Text *texts = NULL;
    Py_ssize_t *first = PyMem_Malloc((size_t)(2 * n + 1) * sizeof(Py_ssize_t)), n_texts = 0, cap = 2 * n + 1;
    int status = 0;
    if (held == NULL || first == NULL) goto fail;
    texts = PyMem_Malloc((size_t)cap * sizeof(Text));
    if (texts == NULL) goto fail;
    for (Py_ssize_t i = 0; i < n && status == 0; i++) {
        PyObject *h = PyList_GET_ITEM(hyp_list, i), *refs = PyList_GET_ITEM(ref_list, i);
        if (!(PyList_Check(refs) || PyTuple_Check(refs)) || PySequence_Fast_GET_SIZE(refs) == 0) {
            status = -2;
            break;
        }
        Py_ssize_t k = PySequence_Fast_GET_SIZE(refs);
        if (n_texts + k + 1 > cap) {
            cap = 2 * (n_texts + k + 1);
            Text *more = PyMem_Realloc(texts, (size_t)cap * sizeof(Text));
            if (more == NULL) goto fail;
            texts = more;
        }
        first[2 * i] = n_texts;
        first[2 * i + 1] = k;
        PyObject *copy = PySequence_Tuple(refs); /* a list can change while the GIL is released: hold a copy */
        if (copy == NULL || PyList_Append(held, h) < 0 || PyList_Append(held, copy) < 0) {
            Py_XDECREF(copy);
            goto fail;
        }
        Py_DECREF(copy);
        status = open_text(h, &texts[n_texts++]);
        for (Py_ssize_t r = 0; r < k && status == 0; r++) status = open_text(PyTuple_GET_ITEM(copy, r), &texts[n_texts++]);
    }
    if (status == -1) goto fail;
    if (status == -2) {
        Py_DECREF(held);
        PyMem_Free(texts);
        PyMem_Free(first);
        Py_RETURN_NONE;
    }
    out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)n * (size_t)(2 + 2 * max_order) * sizeof(int64_t)));
    if (out == NULL) goto fail;
    int64_t *rows_out = (int64_t *)PyByteArray_AS_STRING(out);
    Scratch s;
    memset(&s, 0, sizeof(s));
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !failed; i++)
        failed = example_row(&texts[first[2 * i]], first[2 * i + 1], max_order, use_13a, &s,
                             rows_out + (size_t)i * (size_t)(2 + 2 * max_order)) < 0;
    Py_END_ALLOW_THREADS
    release(&s);
    if (failed) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_DECREF(held);
    PyMem_Free(texts);
    PyMem_Free(first);
    return out;
fail:
    if (!PyErr_Occurred()) PyErr_NoMemory();
    Py_XDECREF(held);
    Py_XDECREF(out);
    PyMem_Free(texts);
    PyMem_Free(first);
    return NULL;
}

static PyMethodDef methods[] = {
    {"rows", rows, METH_VARARGS,
     "rows(hypotheses, references, max_order, tokenize_13a) -> bytearray of int64 rows, or None (see the source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_bleu_rows",
                                    "sacrebleu's BLEU sentence statistics (13a tokenizer and n-gram clipping), in C.",
                                    -1, methods};

PyMODINIT_FUNC PyInit__bleu_rows(void) { return PyModule_Create(&module); }
