"""ChartQA relaxed accuracy: numbers within a relative tolerance, three published rules.

* ``olive`` (Olive's ``RelaxedAccuracy``): parse ``float(s.strip().replace(",", "").replace("%", ""))``; when both
  prediction and reference parse, correct iff ``ref == pred or (ref != 0 and abs(pred - ref) / abs(ref) <=
  tolerance)``; otherwise Olive's normalized string equality. "%" is deleted, not scaled ("51%" matches "50%",
  "0.5" does not). Equal values match, so "inf" matches "inf" (and "1e309") although inf - inf is nan; nan
  matches nothing, and an infinity matches no other value.
* ``pix2struct`` (google-research/pix2struct ``relaxed_correctness``, also Unitxt, Qwen-VL, lmms-eval): no
  stripping; a trailing "%" divides by 100; if both parse and the reference is not zero (nan counts as not zero),
  correct iff ``abs(pred - ref) / abs(ref) <= tolerance``; otherwise case-insensitive exact string match, so a
  zero reference needs the same string.
* ``mistral`` (lm-evaluation-harness ``chartqa`` ``RelaxedCorrectness``, from mistral-evals): a string with a digit
  loses its trailing punctuation and whitespace (but not "%") and its "," and "$"; one without loses a pair of
  enclosing quotes. Numbers compare by ``abs(pred - ref) / max(abs(ref), 1e-10) <= tolerance``, and when either
  side ends in "%" also with that side divided by 100. A one-letter reference matches the prediction's first
  character (multiple choice); anything else is a case-insensitive exact match. The harness only scores the text
  after the last "answer:" of a generation; extracting it is a post-processing step, not part of this rule.

Olive's rule screens all strings at once, parses plain decimals with numpy (exactly as ``float()`` does) and calls
``float()`` only on the other strings that can be numbers (:func:`parse_floats`); the other two rules parse each
distinct string once in Python; all compare with numpy.
"""

from __future__ import annotations

import string
from collections.abc import Callable

import numpy as np

from olive_eval.metrics.answers.text import Segments

__all__ = ["RULES", "mistral_relaxed", "olive_relaxed", "parse_floats", "pix2struct_relaxed"]

RULES = ("olive", "pix2struct", "mistral")
_CAN_START = np.zeros(256, bool)  # first and last characters of a float() string (lowercased, stripped)
_CAN_START[[*b"0123456789+-.", *range(0x80, 0x100)]] = True
_CAN_END = np.zeros(256, bool)
_CAN_END[[*b"0123456789.fyn", *range(0x80, 0x100)]] = True
_MAX_DIGITS = 15  # digits of a plain decimal parsed with numpy: below 10**15 < 2**53, exact in float64
_MAX_PLAIN_BYTES = 64  # longer candidates go to float()
_POW10 = np.array([10.0**k for k in range(_MAX_DIGITS + 1)])  # exact: powers of ten up to 1e22 are doubles


def parse_floats(seg: Segments, drop: str = "") -> tuple[np.ndarray, np.ndarray]:
    """``float()`` of every normalized string after deleting the ``drop`` characters: (parsed?, value or nan).

    Three stages, each exact:

    1. A screen reads three bytes of every string: a float string (lowercased, stripped) starts with a sign, a
       digit, "." or a non-ASCII digit, or is "inf", "infinity" or "nan" (starts "in" or "na"); it ends with a
       digit, ".", a non-ASCII digit, "f", "y" or "n". A ``drop`` character counts as any of these (it is
       deleted before ``float()``). The rest are not numbers.
    2. Plain decimals (:func:`_plain_decimals`) are parsed with numpy.
    3. Whatever else passed the screen ("1e5", "inf", "1_000", other digits, more than 15 digits) goes to
       ``float()`` itself.

    Normalization does not change what ``float()`` accepts: whitespace inside a string fails either way, at its
    ends it is ignored either way, and lowercasing touches only letters that ``float()`` reads in either case.
    """
    ok = np.zeros(seg.n, bool)
    value = np.full(seg.n, np.nan)
    size, starts, buf = seg.lengths, seg.starts, seg.buf
    first, second, last = buf[starts], buf[starts + 1], buf[starts + np.maximum(size - 1, 0)]
    dropped = np.zeros(256, bool)
    dropped[list(drop.encode())] = True
    word = ((first == ord("i")) & (second == ord("n"))) | ((first == ord("n")) & (second == ord("a")))
    lead = _CAN_START[first] | dropped[first] | word | (((first == ord("i")) | (first == ord("n"))) & dropped[second])
    candidates = np.flatnonzero((size > 0) & lead & (_CAN_END[last] | dropped[last]))
    plain, plain_value = _plain_decimals(seg, candidates, drop)
    rows = candidates[plain]
    ok[rows], value[rows] = True, plain_value[plain]
    rest = candidates[~plain]
    if rest.size:
        data = buf.tobytes()
        spans = zip(starts[rest].tolist(), (starts[rest] + size[rest]).tolist(), strict=True)
        text = b"\x00".join(data[a:b] for a, b in spans).decode("utf-8", "surrogatepass")
        for ch in drop:
            text = text.replace(ch, "")
        for i, s in zip(rest.tolist(), text.split("\x00"), strict=True):
            try:
                value[i] = float(s)
                ok[i] = True
            except ValueError:
                pass
    return ok, value


def _plain_decimals(seg: Segments, rows: np.ndarray, drop: str) -> tuple[np.ndarray, np.ndarray]:
    """For the strings ``rows``: is it a plain decimal, and its value (as ``float()`` gives it).

    Plain: an optional leading sign, then digits with at most one ".", and at least one digit, ``drop``
    characters anywhere after the sign, at most 15 digits in all. Its value is ``M / 10**k`` with ``M`` the
    digits as an integer (below 10**15 < 2**53, exact in float64) and ``k`` the digits after the point: one
    correctly rounded division of two exact doubles, so the correctly rounded value of the decimal, which is
    what ``float()`` returns (Clinger's fast path). Read one byte position at a time over all strings at once,
    longest first so that each position works on a prefix.
    """
    first = seg.buf[seg.starts[rows]]
    negative = first == ord("-")
    signed = negative | (first == ord("+"))
    remaining = seg.lengths[rows] - signed  # the bytes after the sign
    order = np.flatnonzero(remaining <= _MAX_PLAIN_BYTES)
    order = order[np.argsort(-remaining[order].astype(np.int8), kind="stable")]
    pos, remaining = seg.starts[rows[order]] + signed[order], remaining[order]
    n = order.size
    mantissa = np.zeros(n, np.int64)
    digits = np.zeros(n, np.int8)
    fraction = np.zeros(n, np.int8)
    point = np.zeros(n, bool)
    bad = np.zeros(n, bool)
    drops = np.frombuffer(drop.encode(), np.uint8)
    descending = -remaining
    for j in range(int(remaining[0]) if n else 0):
        k = int(np.searchsorted(descending, -j, side="left"))  # strings with a byte at position j: a prefix
        c = seg.buf[pos[:k] + j]
        d = c - np.uint8(48)
        digit = d < 10
        m = mantissa[:k]
        np.copyto(m, m * 10 + d, where=digit)  # wraps past 18 digits: those are not plain anyway
        digits[:k] += digit
        fraction[:k] += digit & point[:k]
        dot = c == ord(".")
        bad[:k] |= dot & point[:k]
        point[:k] |= dot
        other = ~(digit | dot)
        for ch in drops:
            other &= c != ch
        bad[:k] |= other
    good = ~bad & (digits > 0) & (digits <= _MAX_DIGITS)
    magnitude = mantissa / _POW10[np.where(good, fraction, 0)]
    out_plain = np.zeros(rows.size, bool)
    out_value = np.full(rows.size, np.nan)
    out_plain[order] = good
    out_value[order] = np.where(negative[order], -magnitude, magnitude)
    return out_plain, out_value


def olive_relaxed(
    pred_num: np.ndarray, pred_val: np.ndarray, ref_num: np.ndarray, ref_val: np.ndarray, tolerance: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: (both numeric, numeric match). Where not both numeric, Olive compares normalized strings."""
    both = pred_num & ref_num
    with np.errstate(all="ignore"):
        close = (ref_val != 0) & (np.abs(pred_val - ref_val) / np.abs(ref_val) <= tolerance)
    return both, (pred_val == ref_val) | close


# ----------------------------------------------------------------------------- per-string rules (pix2struct, mistral)
def _factorize(values: list[object]) -> np.ndarray:
    table: dict[object, int] = {}
    return np.fromiter((table.setdefault(v, len(table)) for v in values), np.int64, len(values))


def _distinct(strings: list[str], features: Callable[[str], tuple]) -> list[tuple]:
    """``features`` of every string, computed once per distinct string."""
    seen: dict[str, tuple] = {}
    return [seen[s] if s in seen else seen.setdefault(s, features(s)) for s in strings]


def _p2s_features(text: str) -> tuple[float, bool, str]:
    try:
        value = float(text.rstrip("%")) / 100.0 if text.endswith("%") else float(text)
        return value, True, text.lower()
    except ValueError:
        return np.nan, False, text.lower()


def pix2struct_relaxed(preds: list[str], refs: list[str], tolerance: float) -> np.ndarray:
    """Per aligned (prediction, reference) pair: pix2struct's ``relaxed_correctness``."""
    fp, ft = _distinct(preds, _p2s_features), _distinct(refs, _p2s_features)
    pv, pn = np.array([f[0] for f in fp]), np.array([f[1] for f in fp], bool)
    tv, tn = np.array([f[0] for f in ft]), np.array([f[1] for f in ft], bool)
    ids = _factorize([f[2] for f in fp] + [f[2] for f in ft])
    same_text = ids[: len(preds)] == ids[len(preds) :]
    with np.errstate(all="ignore"):
        close = np.abs(pv - tv) / np.abs(tv) <= tolerance
    return np.where(pn & tn & (tv != 0), close, same_text)


_END_PUNCTUATION = frozenset(string.punctuation) - {"%"}


def _mistral_text(text: str) -> str:
    if not any(ch.isdigit() for ch in text):
        quoted = text[:1] in ("'", '"') and text.endswith(text[:1])
        return text[1:-1] if quoted else text
    end = len(text)
    while end and (text[end - 1] in _END_PUNCTUATION or text[end - 1].isspace()):
        end -= 1
    return text[:end].replace(",", "").replace("$", "")


def _mistral_features(text: str) -> tuple[float, bool, bool, str, str, bool]:
    text = _mistral_text(text)
    core = text.strip()
    percent = core.endswith("%")
    try:
        value, numeric = float(core.rstrip("%")), True
    except ValueError:
        value, numeric, percent = np.nan, False, False
    letter = len(text) == 1 and text.isalpha()
    return value, numeric, percent, text.lower(), text[:1].lower(), letter


def mistral_relaxed(preds: list[str], refs: list[str], tolerance: float) -> np.ndarray:
    """Per aligned (prediction, reference) pair: the lm-evaluation-harness ChartQA rule."""
    fp, ft = _distinct(preds, _mistral_features), _distinct(refs, _mistral_features)
    pv, pn, pp = (np.array([f[k] for f in fp]) for k in range(3))
    tv, tn, tp = (np.array([f[k] for f in ft]) for k in range(3))
    letter = np.array([f[5] for f in ft], bool)
    ids = _factorize([f[3] for f in fp] + [f[3] for f in ft] + [f[4] for f in fp])
    n = len(preds)
    pred_text, ref_text, pred_first = ids[:n], ids[n : 2 * n], ids[2 * n :]
    pn, tn, pp, tp = pn.astype(bool), tn.astype(bool), pp.astype(bool), tp.astype(bool)

    def within(p: np.ndarray, t: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.abs(p - t) / np.maximum(np.abs(t), 1e-10) <= tolerance

    direct = within(pv, tv)
    scaled = within(np.where(pp, pv / 100, pv), tv) | within(pv, np.where(tp, tv / 100, tv))
    numeric = direct | ((pp | tp) & scaled)
    as_letter = letter & np.array([bool(f[4]) for f in fp], bool)  # one-letter reference, non-empty prediction
    text_match = np.where(as_letter, pred_first == ref_text, pred_text == ref_text)
    return np.where(pn & tn, numeric, text_match)
