"""Speech error rates as accuracy sub-types: ``wer``, ``mer``, ``wil``, ``wip`` (words) and ``cer`` (characters).

Each is a map/reduce metric over per-utterance edit counts ``[N, 4]`` (hits, substitutions, deletions,
insertions; see :mod:`olive_eval.metrics.speech.alignment`), so corpus values, bootstrap intervals and
paired goals all come from one alignment per utterance. ``wer``, ``mer``, ``wil`` and ``wip`` with the same
normalizer share that alignment (``shared_key``): one pass over the texts feeds all four. ``cer`` aligns
characters, which is its own computation.

metric_config:

* ``normalizer``: ``"olive"`` (the default: Olive's ``normalize: true``, which came after Olive 0.13),
  ``"olive_raw"`` (Olive's ``normalize: false``, and Olive 0.13's raw-string comparison), ``"none"`` (jiwer's
  words), ``"whisper_english"`` or ``"open_asr_leaderboard"`` (Whisper's English normalizer, then kaldialign's
  counting with merged compounds; ``wer`` only). See :mod:`olive_eval.metrics.speech.normalize`.

Empty references follow jiwer 4: an utterance with no reference words adds its prediction's words as
insertions. A corpus with no reference words at all has no error rate: that is an error, not ``inf``.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from typing import Any, ClassVar

import numpy as np
from pydantic import Field, field_validator, model_validator

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.speech import alignment as A
from olive_eval.metrics.speech.normalize import get_normalizer, normalize_texts
from olive_eval.strict_model import StrictModel
from olive_eval.transforms import TransformSpec, spec_key

__all__ = [
    "CharacterErrorRate",
    "ErrorRateConfig",
    "MatchErrorRate",
    "WordErrorRate",
    "WordInfoLost",
    "WordInfoPreserved",
    "WordsOnlyConfig",
]

#: The normalizer whose counting (merged compounds) defines only WER.
LEADERBOARD = "open_asr_leaderboard"


class ErrorRateConfig(StrictModel):
    """metric_config of wer, cer, mer, wil and wip."""

    normalizer: TransformSpec | None = Field(
        None,
        description="Text normalization before alignment: olive (default: lowercase, punctuation to spaces), "
        "olive_raw (Olive's raw text, split at any whitespace), none (jiwer's words), whisper_english, "
        "open_asr_leaderboard (Whisper English + kaldialign with merged compounds; wer only), or any registered "
        "text transform, or a list of them applied in order",
    )
    normalize: bool | None = Field(
        None, description="Olive's switch: false means normalizer 'olive_raw' (or 'none' where given)."
    )

    @field_validator("normalizer")
    @classmethod
    def _known(cls, value: TransformSpec | None) -> TransformSpec | None:
        if value is not None:
            get_normalizer(value)  # a ValueError names what is wrong
        return value

    @model_validator(mode="after")
    def _resolve(self) -> ErrorRateConfig:
        if self.normalize is False:
            if self.normalizer not in (None, "olive_raw", "none"):
                raise ValueError(f"normalize: false contradicts normalizer '{self.normalizer}'; give one of them")
            self.normalizer = self.normalizer or "olive_raw"
        elif self.normalizer is None:
            self.normalizer = "olive"
        return self

    @property
    def name(self) -> str:
        """The normalizer as a key: its name, or its spec as JSON."""
        return spec_key(self.normalizer)


class WordsOnlyConfig(ErrorRateConfig):
    """metric_config of cer, mer, wil and wip: the leaderboard's counting defines only WER."""

    @model_validator(mode="after")
    def _not_leaderboard(self) -> WordsOnlyConfig:
        if self.normalizer == LEADERBOARD:
            raise ValueError(
                f"normalizer '{LEADERBOARD}' defines only wer (merged compounds leave no prediction length); "
                "use 'whisper_english'"
            )
        return self


def as_text_list(values: Any) -> list[Any]:
    """A column of texts as a list; a bare string (or a 0-d string array) is one text."""
    if isinstance(values, str):
        return [values]
    if isinstance(values, np.ndarray):
        return [values.item()] if values.ndim == 0 else values.tolist()
    return list(values)


def check_texts(items: list[Any], what: str, offset: int) -> None:
    """TypeError naming the first example whose text is not a string, with its type."""
    if all(map(isinstance, items, repeat(str))):
        return
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(
                f"the {what} of example {offset + index} is a {type(item).__name__}, not a str: {item!r:.80}"
            )


class _ErrorRate(Metric):
    """Per-utterance edit counts, reduced by one of the alignment module's measures."""

    kind = Kind.MAP_REDUCE
    higher_is_better = False
    Config: ClassVar[type[StrictModel]] = WordsOnlyConfig
    measure: ClassVar[str]
    unit: ClassVar[str] = "words"

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0  # examples counted so far: errors name the example across batches

    def _counter(self) -> Callable[[list[str], list[str]], np.ndarray]:
        if self.measure == "cer":
            return A.char_edit_counts
        return A.leaderboard_edit_counts if self.config.name == LEADERBOARD else A.word_edit_counts

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        preds, refs = as_text_list(predictions), as_text_list(references)
        if len(preds) != len(refs):
            raise ValueError(
                f"{self.name}: {len(preds)} predictions and {len(refs)} references; they must pair up one to one"
            )
        normalizer = self.config.normalizer
        try:  # the kernels check the types; a failure is named here, with the example's number across batches
            if normalizer != "none":
                preds = normalize_texts(preds, normalizer, what="prediction")
                refs = normalize_texts(refs, normalizer, what="reference")
            counts = self._counter()(preds, refs)
        except TypeError:
            check_texts(preds, "prediction", self._seen)
            check_texts(refs, "reference", self._seen)
            raise
        self._seen += len(counts)
        return counts

    def shared_key(self) -> Any:
        """Word measures with one normalizer share one alignment; CER aligns characters."""
        return ("speech_counts", "chars" if self.measure == "cer" else "words", self.config.name)

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, 4), np.int64)

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        """Every resample in one call; a resample without reference words has no value (NaN)."""
        t = np.asarray(totals, dtype=np.int64).reshape(-1, 4)
        empty = t[:, A.HITS] + t[:, A.SUBSTITUTIONS] + t[:, A.DELETIONS] == 0
        values = np.asarray(A.MEASURES[self.measure](t, empty_reference="jiwer"), np.float64).reshape(-1)
        return np.where(empty, np.nan, values)

    def instance_scores(self, statistics: np.ndarray) -> np.ndarray:
        """Each utterance's own rate (jiwer 4's values for an empty reference): sort to find the worst."""
        rows = np.asarray(statistics).reshape(-1, 4)
        return A.instance_scores(rows, self.measure) if len(rows) else np.empty(0)

    def reduce(self, statistics: np.ndarray) -> Score:
        totals = np.asarray(statistics, dtype=np.int64).reshape(-1, 4).sum(axis=0)
        h, s, d, i = (int(v) for v in totals)
        if h + s + d == 0:
            raise ValueError(
                f"{self.name}: the references hold no {self.unit} at all after '{self.config.name}' normalization "
                f"({len(np.asarray(statistics).reshape(-1, 4))} utterances): the error rate is undefined; check the "
                "data config's transcript column"
            )
        value = float(A.MEASURES[self.measure](totals))
        extra = {
            "hits": h,
            "substitutions": s,
            "deletions": d,
            "insertions": i,
            f"reference_{self.unit}": h + s + d,
            "utterances": len(np.asarray(statistics).reshape(-1, 4)),
            "normalizer": self.config.name,
        }
        return Score(value, extra=extra, details=extra)  # details: written to results.json


@register_metric
class WordErrorRate(_ErrorRate):
    """``(S + D + I) / reference words`` over the corpus (not a mean of utterance rates)."""

    name = "wer"
    measure = "wer"
    Config: ClassVar[type[StrictModel]] = ErrorRateConfig


@register_metric
class CharacterErrorRate(_ErrorRate):
    """WER over characters (jiwer 4: each text stripped, spaces are characters)."""

    name = "cer"
    measure = "cer"
    unit = "characters"


@register_metric
class MatchErrorRate(_ErrorRate):
    """``(S + D + I) / (H + S + D + I)``."""

    name = "mer"
    measure = "mer"


@register_metric
class WordInfoLost(_ErrorRate):
    """``1 - wip``."""

    name = "wil"
    measure = "wil"


@register_metric
class WordInfoPreserved(_ErrorRate):
    """``(H / reference words) * (H / prediction words)``; higher is better."""

    name = "wip"
    measure = "wip"
    higher_is_better = True
