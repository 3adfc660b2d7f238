"""Answer-matching kernels for vision and document QA: one float64 score per example.

Every kernel takes ``predictions`` (strings) and ``references`` (per example, the acceptable answers: a list of
strings, a ``|``-joined string, or an :class:`~olive_eval.metrics.answers.references.Answers`) and returns a
float64 array of shape ``[N]``; an example scores the best of its alternatives. The metric value is the mean
(:func:`mean_score`, which is 0.0 for no examples, as in Olive).

* :func:`exact_match_scores` -- Olive: ``" ".join(s.strip().lower().split())`` equal to an alternative. No
  punctuation stripping ("paris." is not "paris"). With ``normalize=False`` the strings are compared as they are
  (Unitxt's ``Accuracy``: ``prediction in references``).
* :func:`relaxed_accuracy_scores` -- ChartQA's numeric tolerance, three rules (:mod:`.numbers`).
* :func:`word_sort_ratio_scores` -- Olive's word overlap: words of ``s.strip().lower().split()``;
  ``|pred words ∩ ref words|`` (as multisets) over the larger word count; an empty reference scores 1.0 against an
  empty prediction and 0.0 otherwise. Or rapidfuzz's ``fuzz.token_sort_ratio / 100`` with a stated processor.
* :func:`anls_scores` -- DocVQA's Average Normalized Levenshtein Similarity, as its scorer computes it
  (:mod:`.anls`).
* :func:`vqa_accuracy_scores` -- VQA v2 consensus accuracy over the human answers (:mod:`.vqa`).

The kernels with Olive's normalization work on blocks of examples whose predictions and answers are normalized
together into one byte buffer (:mod:`.blocks`, :mod:`.text`), with numbers parsed there too (:mod:`.numbers`):
no Python call per example or per answer. exact_match also has a C form (``_exact_match.c``, an optional
extension built at install where a C compiler is present) that reads each string once, normalizing and comparing
as it goes; a test holds it to the numpy kernel and to the per-sample definition. The others use rapidfuzz's ``process.cpdist`` over whole lists, or
call a rule that is inherently per string once per distinct string (pix2struct, mistral, VQA normalization).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from olive_eval.metrics.answers import numbers
from olive_eval.metrics.answers.anls import anls_scores
from olive_eval.metrics.answers.blocks import Block, columns, scores_by_block
from olive_eval.metrics.answers.references import Answers, check_lengths, check_predictions, to_answers
from olive_eval.metrics.answers.text import dense_ids
from olive_eval.metrics.answers.vqa import consensus_scores, vqa_normalize
from olive_eval.transforms import TextTransform, TransformSpec, build_transform, transform_registry

try:
    from olive_eval.metrics.answers import _exact_match as _compiled
except ImportError:  # installed without a C compiler: the numpy kernel
    _compiled = None

__all__ = [
    "anls_scores",
    "exact_match_scores",
    "mean_score",
    "relaxed_accuracy_scores",
    "vqa_accuracy_scores",
    "word_sort_ratio_scores",
]

References = Sequence[str] | Sequence[Sequence[str]] | Answers
Rule = Literal["olive", "pix2struct", "mistral"]
Method = Literal["olive", "token_sort_ratio"]
#: ``"default"`` (rapidfuzz's ``default_process``), ``"none"``, or any registered text transform (or a list).
Processor = TransformSpec
PROCESSORS = ("default", "none")


def mean_score(scores: np.ndarray) -> float:
    """The metric value: the mean score, and 0.0 when there are no examples (Olive's value for empty input)."""
    scores = np.asarray(scores, np.float64)
    return float(scores.mean()) if scores.size else 0.0


def _inputs(predictions: Sequence[str], references: References, metric: str) -> tuple[list[str], Answers]:
    preds = check_predictions(predictions)
    answers = to_answers(references)
    check_lengths(len(preds), len(answers), metric)
    return preds, answers


def exact_match_scores(predictions: Sequence[str], references: References, *, normalize: bool = True) -> np.ndarray:
    """1.0 where the normalized prediction equals a normalized alternative, else 0.0.

    ``normalize=False`` compares the strings as they are: no case folding, no whitespace stripped or collapsed
    (a ``|``-joined reference is still split into its alternatives). Runs the C extension where it is built
    (:mod:`._exact_match`, optional), else the numpy kernel; the two give the same scores. Input either one
    rejects goes through the numpy kernel, whose error names the example.
    """
    preds, refs = columns(predictions, references, "exact_match")
    if _compiled is not None:
        if isinstance(refs, Answers):
            offsets = np.ascontiguousarray(refs.offsets, np.int64)
            scores = _compiled.matches(preds, refs.texts, offsets, normalize)
        else:
            scores = _compiled.matches(preds, refs, None, normalize)
        if scores is not None:
            return np.frombuffer(scores, np.float64)
    if not normalize:
        return _verbatim_matches(*_inputs(preds, refs, "exact_match"))
    return scores_by_block(preds, refs, "exact_match", _exact_match)


def _exact_match(block: Block) -> np.ndarray:
    return block.matches().astype(np.float64)


def _verbatim_matches(preds: list[str], answers: Answers) -> np.ndarray:
    """Strings as they are: every distinct string gets an id (one dict over all of them), then ids compare."""
    if not preds:
        return np.zeros(0)
    ids: dict[str, int] = {}
    pred_ids = np.fromiter((ids.setdefault(p, len(ids)) for p in preds), np.int64, len(preds))
    ref_ids = np.fromiter((ids.get(a, -1) for a in answers.texts), np.int64, len(answers.texts))
    return answers.best(pred_ids[answers.owner()] == ref_ids)


def relaxed_accuracy_scores(
    predictions: Sequence[str], references: References, *, tolerance: float = 0.05, rule: Rule = "olive"
) -> np.ndarray:
    """1.0 where the prediction is within ``tolerance`` (relative) of an alternative, by ``rule``, else 0.0."""
    if not tolerance >= 0:  # also rejects nan
        raise ValueError(f"relaxed_accuracy tolerance must be >= 0, got {tolerance}")
    if rule not in numbers.RULES:
        raise ValueError(f"relaxed_accuracy rule must be one of {list(numbers.RULES)}, got {rule!r}")
    if rule == "olive":
        return scores_by_block(predictions, references, "relaxed_accuracy", lambda b: _olive_relaxed(b, tolerance))
    preds, answers = _inputs(predictions, references, "relaxed_accuracy")
    if not preds:
        return np.zeros(0)
    relaxed = numbers.pix2struct_relaxed if rule == "pix2struct" else numbers.mistral_relaxed
    return answers.best(relaxed([preds[i] for i in answers.owner().tolist()], answers.texts, tolerance))


def _olive_relaxed(block: Block, tolerance: float) -> np.ndarray:
    left, right = block.pairs()
    seg = block.seg
    parsed, value = numbers.parse_floats(seg, drop=",%")
    both, close = numbers.olive_relaxed(parsed[left], value[left], parsed[right], value[right], tolerance)
    match = close & both
    text = np.flatnonzero(~both)  # Olive compares strings only where a side is not a number
    if text.size:
        match[text] = seg.equal(left[text], right[text])
    return block.best(match)


def word_sort_ratio_scores(
    predictions: Sequence[str],
    references: References,
    *,
    method: Method = "olive",
    processor: Processor = "default",
) -> np.ndarray:
    """Word overlap of prediction and reference, in [0, 1] (method ``olive``, or ``token_sort_ratio``).

    ``processor`` applies to ``token_sort_ratio`` only: ``"default"`` is ``rapidfuzz.utils.default_process``
    (lowercase, non-alphanumerics to spaces, trimmed: fuzzywuzzy's behaviour), ``"none"`` compares the strings as
    they are (rapidfuzz >= 3's own default), and any other registered text transform (or a list) is applied to
    both strings.
    """
    if method not in ("olive", "token_sort_ratio"):
        raise ValueError(f"word_sort_ratio method must be 'olive' or 'token_sort_ratio', got {method!r}")
    transform = processor_transform(processor)
    if method == "olive":
        return scores_by_block(predictions, references, "word_sort_ratio", lambda b: b.best(_word_overlap(b)))
    preds, answers = _inputs(predictions, references, "word_sort_ratio")
    if not preds:
        return np.zeros(0)
    if method == "token_sort_ratio":
        from rapidfuzz import fuzz, process, utils

        scores = process.cpdist(
            preds if answers.single else [preds[i] for i in answers.owner().tolist()],
            answers.texts,
            scorer=fuzz.token_sort_ratio,
            processor=utils.default_process if processor == "default" else transform,
            dtype=np.float64,
        )
    return answers.best(scores / 100.0)


def processor_transform(spec: Processor) -> TextTransform | None:
    """The text transform a ``processor`` other than ``"default"`` names (None: the strings as they are)."""
    if spec in PROCESSORS:
        return None
    if isinstance(spec, str) and spec not in transform_registry:
        raise ValueError(
            f"word_sort_ratio processor must be one of {list(PROCESSORS)} or a registered text transform, got {spec!r}"
        )
    return build_transform(spec, "processor")


def _word_overlap(block: Block) -> np.ndarray:
    """Olive's ratio for every (prediction, alternative) pair, from one sort of (pair, word id, side) keys."""
    seg, n, answers = block.seg, block.n, block.alternatives
    pairs = seg.n - n
    left = answers.owner()
    starts, ends, string_of = seg.words()
    ids = seg.word_ids(starts, ends)
    id_bits = max(int(ids.max(initial=0)).bit_length(), 1)
    if pairs.bit_length() + id_bits + 1 > 63:  # renumber the words densely so that the keys fit 64 bits
        ids, vocab = dense_ids(ids.astype(np.uint64))
        id_bits = max(vocab.bit_length(), 1)
        if pairs.bit_length() + id_bits + 1 > 63:
            raise ValueError("word_sort_ratio: too many (pair, word) combinations to key in 64 bits")
    per_string = np.bincount(string_of, minlength=n + pairs)
    n_pred, n_ref = per_string[left], per_string[n:]
    split = int(np.searchsorted(string_of, n))  # words are in string order: the predictions' come first
    if answers.single:
        pred_pair, pred_ids = string_of[:split], ids[:split]
    else:  # every prediction's words once for each of its alternatives
        first = np.concatenate(([0], np.cumsum(per_string[:n])))[left]
        pred_pair = np.repeat(np.arange(pairs), n_pred)
        pred_ids = ids[np.repeat(first - np.cumsum(n_pred) + n_pred, n_pred) + np.arange(pred_pair.size)]
    ref_pair, ref_ids = string_of[split:] - n, ids[split:]
    keys = np.concatenate((((pred_pair << id_bits) | pred_ids) << 1, (((ref_pair << id_bits) | ref_ids) << 1) | 1))
    keys.sort()
    # a run of one (pair, word): its prediction entries (side 0) first, then its reference entries (side 1)
    word = keys >> 1
    run = np.flatnonzero(np.concatenate(([True], word[1:] != word[:-1]))) if keys.size else keys
    in_ref = np.add.reduceat(keys & 1, run) if run.size else run
    in_pred = np.diff(np.append(run, keys.size)) - in_ref
    common = np.bincount(word[run] >> id_bits, weights=np.minimum(in_pred, in_ref), minlength=pairs)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = common / np.maximum(n_pred, n_ref)
    return np.where(n_ref == 0, (n_pred == 0).astype(np.float64), ratio)


def vqa_accuracy_scores(predictions: Sequence[str], references: References) -> np.ndarray:
    """VQA v2 accuracy: ``references`` are the human answers of each question (usually 10)."""
    preds, answers = _inputs(predictions, references, "vqa_accuracy")
    if not preds:
        return np.zeros(0)
    table: dict[str, int] = {}  # normalized answer -> id; each distinct raw string is normalized once
    seen: dict[str, int] = {}

    def ident(s: str) -> int:
        found = seen.get(s)
        if found is None:
            found = seen[s] = table.setdefault(vqa_normalize(s), len(table))
        return found

    pred_ids = np.fromiter(map(ident, preds), np.int64, len(preds))
    ref_ids = np.fromiter(map(ident, answers.texts), np.int64, len(answers.texts))
    same = (pred_ids[answers.owner()] == ref_ids).astype(np.int64)
    matches = np.add.reduceat(same, answers.offsets[:-1]) if same.size else same
    return consensus_scores(matches, answers.counts)
