"""ChartQA relaxed accuracy: numbers within a relative tolerance, three published rules.

* ``olive`` (Olive's ``RelaxedAccuracy``): parse ``float(s.strip().replace(",", "").replace("%", ""))``; when both
  prediction and reference parse, correct iff ``pred == ref`` for a zero reference, else
  ``abs(pred - ref) / abs(ref) <= tolerance``; otherwise Olive's normalized string equality. "%" is deleted, not
  scaled ("51%" matches "50%", "0.5" does not). nan never matches; "inf" matches nothing either (inf - inf is nan).
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

Olive's rule screens all strings at once and calls ``float()`` only on those that can be numbers
(:func:`parse_floats`); the other two parse each distinct string once in Python; all compare with numpy.
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
_BLOCK = 1024  # candidates converted per map(float, ...) call; a block holding a non-number goes one by one


def parse_floats(seg: Segments, drop: str = "") -> tuple[np.ndarray, np.ndarray]:
    """``float()`` of every normalized string after deleting the ``drop`` characters: (parsed?, value or nan).

    Only strings that can be floats reach ``float()``. A float string (lowercased, stripped) starts with a sign,
    a digit, "." or a non-ASCII digit, or is "inf", "infinity" or "nan" (starts "in" or "na"); it ends with a
    digit, ".", a non-ASCII digit, "f", "y" or "n". A ``drop`` character counts as any of these (it is deleted
    before ``float()``). The screen reads three bytes of every string with numpy; the survivors are converted by
    ``map(float, ...)`` in blocks.
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
    if not candidates.size:
        return ok, value
    text = seg.text()
    for ch in drop:
        text = text.replace(ch, "")
    parts = text.split("\x00")  # a string's spaces at its ends are still there: float() ignores them
    strings = list(map(parts.__getitem__, candidates.tolist()))
    for lo in range(0, len(strings), _BLOCK):
        block, rows = strings[lo : lo + _BLOCK], candidates[lo : lo + _BLOCK]
        try:  # candidates are nearly always numbers: a whole block at C speed
            value[rows] = list(map(float, block))
            ok[rows] = True
        except ValueError:
            for i, s in zip(rows.tolist(), block, strict=True):
                try:
                    value[i] = float(s)
                    ok[i] = True
                except ValueError:
                    pass
    return ok, value


def olive_relaxed(
    pred_num: np.ndarray, pred_val: np.ndarray, ref_num: np.ndarray, ref_val: np.ndarray, tolerance: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: (both numeric, numeric match). Where not both numeric, Olive compares normalized strings."""
    both = pred_num & ref_num
    with np.errstate(all="ignore"):
        close = np.abs(pred_val - ref_val) / np.abs(ref_val) <= tolerance
    return both, np.where(ref_val == 0, pred_val == 0, close)


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
