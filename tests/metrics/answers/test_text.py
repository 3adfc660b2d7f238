"""The bulk string machinery against Python's own per-string operations (str.lower/split, ==, float)."""

from __future__ import annotations

import random

import numpy as np

from olive_eval.metrics.answers.numbers import parse_floats
from olive_eval.metrics.answers.text import SPACES, Segments, dense_ids

# final sigma context, NUL, a lone surrogate, characters that change length when lowercased, Unicode spaces
ALPHABET = [*"abcAB xyz\t\n,%1.\x01\x1f", "Σ", "σ", "ς", "Α", "İ", "ß", "é", "漢", "\x00", "\ud800", "\u00a0", "\u3000"]
ALPHABET += ["\u2028", "\x85", "\u1680", "'", "’"]


def random_strings(seed: int, n: int, longest: int = 40) -> list[str]:
    rng = random.Random(seed)
    out = ["".join(rng.choices(ALPHABET, k=rng.randint(0, longest))) for _ in range(n)]
    out += ["ΑΣ", "ΑΣ Α", "Σ", "aΣ b", "x" * 300 + "y", "x" * 300 + "z", "abcdefgh", "abcdefghi", "abcdefghij" * 3]
    out += ["", " ", "  \t ", "a" * 16, "a" * 17, "a" * 15 + " b"]
    return out + [rng.choice(out) if rng.random() < 0.5 else out[rng.randrange(len(out))].upper() for _ in out]


def normalize(s: str) -> str:
    return " ".join(s.strip().lower().split())


def test_spaces_are_all_the_characters_split_splits_on():
    every = [c for c in range(0x110000) if len(("a" + chr(c) + "a").split()) == 2]
    assert sorted(map(ord, SPACES)) == every


def test_segments_normalize_like_per_string():
    strings = random_strings(0, 3000)
    assert Segments.of(strings).strings() == [normalize(s) for s in strings]
    assert Segments.of([]).strings() == []


def test_equal_matches_python_equality():
    strings = random_strings(1, 2000, longest=60)
    norm = [normalize(s) for s in strings]
    seg = Segments.of(strings)
    rng = np.random.default_rng(0)
    left, right = rng.integers(0, len(strings), 20000), rng.integers(0, len(strings), 20000)
    right[:8000] = left[:8000]  # identical strings
    same = np.array([norm[a] == norm[b] for a, b in zip(left.tolist(), right.tolist(), strict=True)])
    assert same[8000:].any()  # some distinct indices hold equal strings
    assert (seg.equal(left, right) == same).all()


def test_words_and_word_ids_partition_like_python():
    strings = [*random_strings(2, 3000), "w" * 1000 + "a", "w" * 1000 + "b", "w" * 1000 + "a"]
    seg = Segments.of(strings)
    starts, ends, owner = seg.words()
    words = [w for s in strings for w in s.lower().split()]
    assert owner.tolist() == [i for i, s in enumerate(strings) for _ in s.split()]
    ids = seg.word_ids(starts, ends)
    assert len(ids) == len(words)
    by_word: dict[str, int] = {}
    by_id: dict[int, str] = {}
    for i, w in zip(ids.tolist(), words, strict=True):
        assert by_word.setdefault(w, i) == i  # equal words, equal ids
        assert by_id.setdefault(i, w) == w  # equal ids, equal words


def test_dense_ids_number_distinct_keys_in_sorted_order():
    rng = np.random.default_rng(3)
    for keys in (
        rng.integers(0, 50, 5000).astype(np.uint64) << np.uint64(40),  # colliding home slots
        rng.integers(0, 2**63, 3000, dtype=np.uint64)[rng.integers(0, 3000, 20000)],
        np.array([7], np.uint64),
        np.zeros(0, np.uint64),
    ):
        ids, vocab = dense_ids(keys)
        uniq, inverse = np.unique(keys, return_inverse=True)
        assert vocab == uniq.size and ids.tolist() == inverse.ravel().tolist()


def olive_float(s: str) -> float | None:
    try:
        return float(s.strip().replace(",", "").replace("%", ""))
    except ValueError:
        return None


def test_parse_floats_equals_float():
    rng = random.Random(4)
    pieces = [*"0123456789.eE+-,% _", "inf", "nan", "Infinity", "١", "٣", "x", "\t", "\u00a0", "1e308", "e-400", "yes"]
    strings = ["".join(rng.choices(pieces, k=rng.randint(0, 12))) for _ in range(30000)]
    strings += [f"{rng.uniform(-1e6, 1e6):.17g}" for _ in range(5000)]
    strings += [f"{rng.randint(0, 999)}e{rng.randint(-30, 30)}" for _ in range(5000)]
    strings += [str(rng.randint(-(10**20), 10**20)) for _ in range(2000)]
    strings += ["1e22", "1e23", "1e-22", "1e-23", "123456789012345", "1234567890123456", "4.9e-324", "2e-324"]
    strings += ["0e99999999999999999999", "-0.0e5", "+.5", "5.", ".", "-", "1_000", "1__0", "_1", "1_", "１２", " 7 "]
    strings += ["0.1", "0.3", "1.7976931348623157e308", "1.8e308", "3.14159265358979323846", "-0", "7 8", ""]
    strings += [
        "5 %",
        "% 5",
        "1 , 000",
        "1,2,3",
        "%",
        ",",
        "12%%",
        "-1,000.5%",
        "1" * 30,
        "1" * 24 + "x",
        "9" * 25 + "e-5",
    ]
    parsed, value = parse_floats(Segments.of(strings), drop=",%")
    for s, ok, v in zip(strings, parsed.tolist(), value.tolist(), strict=True):
        expected = olive_float(s)
        assert ok is (expected is not None), s
        if ok:
            assert (v == expected and np.signbit(v) == np.signbit(expected)) or (v != v and expected != expected), s


def test_parse_floats_plain_decimals_equal_float():
    """The numpy path for plain decimals (up to 15 digits) against float(), across its limits."""
    rng = random.Random(5)

    def decimal() -> str:
        digits = "".join(rng.choices("0123456789", k=rng.randint(1, 17)))
        cut = rng.randint(0, len(digits))
        text = rng.choice(["", "-", "+"]) + digits[:cut] + rng.choice([".", ""]) + digits[cut:]
        for _ in range(rng.choice([0, 0, 1, 3])):  # Olive deletes "," and "%" wherever they are
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(",%") + text[at:]
        return text

    strings = [decimal() for _ in range(40000)]
    strings += ["0" * 64 + "1", "0" * 63 + "1", "1" * 15, "1" * 16, "9" * 15 + ".5", "0." + "0" * 14 + "1"]
    strings += [
        "-0",
        "+0.",
        ".0",
        "-.",
        "+",
        "-%",
        ",,5",
        "5,,",
        "%-5",
        "-,5",
        "1.2.3",
        "--1",
        "+-1",
        "9007199254740993",
    ]
    parsed, value = parse_floats(Segments.of(strings), drop=",%")
    for s, ok, v in zip(strings, parsed.tolist(), value.tolist(), strict=True):
        expected = olive_float(s)
        assert ok is (expected is not None), s
        if ok:
            assert v == expected and np.signbit(v) == np.signbit(expected), s
