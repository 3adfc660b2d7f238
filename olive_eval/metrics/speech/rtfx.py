"""``rtfx``: inverse real-time factor, seconds of audio transcribed per second of inference.

Total audio seconds over total inference seconds, from the pass's per-batch timing: each example's
``audio_seconds`` (counted from its decoded samples by ``speech_transcription_pre_process``) and its share of
its batch's timed region (``inference_seconds``: the model call plus post-processing, i.e. decoding to text).
The first ``warmup_batches`` batches (default 1) are left out of both sums. Full precision (Olive rounds to
2 decimals). A map/reduce metric, so intervals and paired goals work as for any accuracy sub-type.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.pass_timing import WarmupConfig
from olive_eval.metrics.registry import register_metric
from olive_eval.strict_model import StrictModel

__all__ = ["RealTimeFactorX", "rtfx"]


def rtfx(audio_seconds: Any, inference_seconds: Any) -> float:
    """Total audio seconds over total inference seconds (``inf`` when no time was recorded, as Olive)."""
    audio = float(np.sum(np.asarray(audio_seconds, dtype=np.float64)))
    seconds = float(np.sum(np.asarray(inference_seconds, dtype=np.float64)))
    return audio / seconds if seconds > 0 else float("inf")


@register_metric
class RealTimeFactorX(Metric):
    name = "rtfx"
    higher_is_better = True
    kind = Kind.MAP_REDUCE
    reads = ("audio_seconds", "inference_seconds", "batch_index")
    Config: ClassVar[type[StrictModel]] = WarmupConfig

    def statistics(self, *fields: Any) -> np.ndarray:
        """Per-example ``[audio seconds, inference seconds]``, zero for the examples of warm-up batches."""
        if len(fields) != len(self.reads):
            raise ValueError(
                f"rtfx reads {', '.join(self.reads)} from a prediction pass over speech data "
                f"(speech_transcription_pre_process gives audio_seconds); got {len(fields)} field(s)"
            )
        audio, seconds, batch_index = (np.asarray(f) for f in fields)
        if not (audio.shape == seconds.shape == batch_index.shape and audio.ndim == 1):
            raise ValueError(
                f"rtfx: audio_seconds, inference_seconds and batch_index must be 1-D and of one length, got shapes "
                f"{list(audio.shape)}, {list(seconds.shape)}, {list(batch_index.shape)}"
            )
        counted = (batch_index >= self.config.warmup_batches).astype(np.float64)
        return np.stack([counted * audio.astype(np.float64), counted * seconds.astype(np.float64)], axis=1)

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, 2))

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        t = np.asarray(totals, dtype=np.float64).reshape(-1, 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(t[:, 1] > 0, t[:, 0] / np.where(t[:, 1] > 0, t[:, 1], 1.0), np.nan)

    def instance_scores(self, statistics: np.ndarray) -> np.ndarray:
        """Each clip's own audio over inference seconds (NaN for the clips of warm-up batches)."""
        return self.finalize_totals(np.asarray(statistics))

    def reduce(self, statistics: np.ndarray) -> Score:
        rows = np.asarray(statistics, dtype=np.float64).reshape(-1, 2)
        audio, seconds = rows.sum(axis=0)
        counted = int(np.count_nonzero(rows[:, 1] > 0))
        if seconds <= 0:
            why = (
                "every batch is a warm-up batch; lower warmup_batches or use more data"
                if len(rows)
                else "no examples to time"
            )
            return Score(float("nan"), undefined=why)
        totals = {"audio_seconds": float(audio), "inference_seconds": float(seconds), "timed_examples": counted}
        return Score(float(audio / seconds), extra=totals, details=totals)
