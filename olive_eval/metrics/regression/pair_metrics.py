"""``r2_score``, ``pearson``, ``spearman``, ``kendall_tau``: values of the whole set, resampled from per-example pairs.

None of them is a sum over examples (R² and Pearson's r centre on the set's means; rank correlations rank the whole
set), so they are global metrics. Their statistics are still per example, ``[n, 2, k]`` (prediction, reference) per
output, so that intervals and paired goals resample examples without running the model again: each resample's
value is computed from the resampled pairs, R² and Pearson's r for a block of resamples at once, a rank
correlation one resample at a time (a rank per resample). The correlations compare one output per example.

Values equal scikit-learn's ``r2_score`` (several outputs: each output's R², then their plain mean, each in
``per_class``) and scipy.stats' ``pearsonr``, ``spearmanr`` and ``kendalltau`` (tau-b). Where they are undefined --
fewer than 2 examples, a constant sample, NaN under ``nan_policy: propagate`` -- the value is NaN with the reason;
scikit-learn's R² of constant references is 1.0 or 0.0 (``force_finite``), undefined here.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from olive_eval.metrics.base import Kind, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.regression.base import RegressionMetric
from olive_eval.metrics.regression.inputs import missing_reason
from olive_eval.metrics.regression.moments import pearson, pearson_rows, r2, r2_rows
from olive_eval.metrics.regression.ranks import kendall_tau_b, spearman

__all__ = ["KendallTau", "PairedMetric", "Pearson", "R2Score", "Spearman"]

#: Resampled values gathered at once by the vectorized resamples (bounds their memory).
_BLOCK_VALUES = 1 << 21


class PairedMetric(RegressionMetric):
    """A global value of (prediction, reference) pairs, with per-example statistics (see module docstring)."""

    kind = Kind.GLOBAL
    higher_is_better = True
    single_output: ClassVar[bool] = True
    #: Whether :meth:`rows_kernel` computes a block of resamples at once (else one :meth:`kernel` call each).
    vectorized: ClassVar[bool] = False

    def kernel(self, x: np.ndarray, y: np.ndarray) -> float:
        """The value of NaN-free ``[n]`` samples (NaN where undefined)."""
        raise NotImplementedError

    def rows_kernel(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``[B]`` values of ``[B, n]`` samples, NaN pairs left out (where :attr:`vectorized`)."""
        raise NotImplementedError

    @property
    def decomposes(self) -> bool:
        """Per-example pairs exist, though the value is no sum over them."""
        return True

    def checked(self, predictions: Any, references: Any) -> tuple[np.ndarray, np.ndarray]:
        """The batch's checked ``[n, k]`` predictions and references; one output where the metric compares one."""
        start = self.seen
        p, r = self.columns(predictions, references)
        if self.single_output and p.shape[1] != 1:
            raise ValueError(
                f"{self.name} compares one output per example; the predictions have {p.shape[1]} "
                f"(from example {start}); pick one in post-processing"
            )
        return p, r

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        return np.stack(self.checked(predictions, references), axis=1)

    def compute(self, predictions: Any, references: Any) -> Score:
        """The whole set from its columns, without stacking them into pairs; examples numbered from 0."""
        self.seen = 0
        return self.score(*self.checked(predictions, references))

    def shared_key(self) -> Any:
        """The pairs are the same work for every paired sub-type with the same policy."""
        return ("regression_pairs", type(self).single_output, self.nan_policy)

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        widths = {p.shape[2] for p in parts if len(p)}
        if len(widths) > 1:
            raise ValueError(f"batches hold different numbers of outputs per example: {sorted(widths)}")
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, 2, 1))

    def instance_scores(self, statistics: np.ndarray) -> None:  # type: ignore[override]
        """None: one example has no value of its own."""
        return None

    def undefined(self, x: np.ndarray, y: np.ndarray) -> str:
        """Why the kernel gave NaN on these NaN-free samples."""
        if len(x) < 2:
            return f"{self.name} needs at least 2 examples, got {len(x)}"
        if np.all(x == x[0]):
            return "the predictions are constant: a correlation needs both samples to vary"
        return "the references are constant: a correlation needs both samples to vary"

    def output_value(self, x: np.ndarray, y: np.ndarray, omitted: bool) -> tuple[float, str | None]:
        """The value of one output's samples (NaN pairs already left out) and, if undefined, why."""
        value = float(self.kernel(x, y))
        if not np.isnan(value):
            return value, None
        why = self.undefined(x, y)
        return value, f"{why} (after nan_policy 'omit')" if omitted else why

    def reduce(self, statistics: np.ndarray) -> Score:
        pairs = np.asarray(statistics, dtype=np.float64)
        return self.score(pairs[:, 0], pairs[:, 1])

    def score(self, p: np.ndarray, r: np.ndarray) -> Score:
        """The value of ``[n, k]`` predictions and references (views into the pairs, or the columns)."""
        if not len(p):
            return Score(float("nan"), undefined="no examples to score")
        missing = None
        if np.isnan(p.sum() + r.sum()):  # one pass each, no mask, in the usual case of no NaN (or inf - inf)
            missing = np.isnan(p).any(axis=1) | np.isnan(r).any(axis=1)
        if missing is not None and missing.any():
            if self.nan_policy != "omit":
                return Score(float("nan"), undefined=missing_reason(missing))
            p, r = p[~missing], r[~missing]
        omitted = missing is not None and bool(missing.any())
        results = [self.output_value(p[:, j], r[:, j], omitted) for j in range(p.shape[1])]
        values = [v for v, _ in results]
        reasons = [(j, why) for j, (_, why) in enumerate(results) if why is not None]
        per_class = values if len(values) > 1 else None
        if reasons:
            j, why = reasons[0]
            return Score(float("nan"), per_class=per_class, undefined=f"output {j}: {why}" if len(values) > 1 else why)
        return Score(float(np.mean(values)), per_class=per_class)

    def reduce_resamples(self, statistics: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """The value on each resample ``idx`` ``[B, n]`` of the examples."""
        pairs = np.asarray(statistics, dtype=np.float64)
        columns = [
            (np.ascontiguousarray(pairs[:, 0, j]), np.ascontiguousarray(pairs[:, 1, j])) for j in range(pairs.shape[2])
        ]
        out = np.empty(len(idx))
        step = max(1, _BLOCK_VALUES // max(idx.shape[1], 1)) if self.vectorized else 1
        for lo in range(0, len(idx), step):
            block = idx[lo : lo + step]
            out[lo : lo + len(block)] = np.mean(
                [self.resampled(x.take(block), y.take(block)) for x, y in columns], axis=0
            )
        return out

    def resampled(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``[B]`` values of ``[B, n]`` resampled samples under the NaN policy."""
        missing = np.isnan(x) | np.isnan(y)
        if self.vectorized:
            values = self.rows_kernel(x, y)
        else:
            values = np.array([self.kernel(a[~m], b[~m]) for a, b, m in zip(x, y, missing, strict=True)])
        if self.nan_policy != "omit":
            values = np.where(missing.any(axis=1), np.nan, values)
        return values


@register_metric
class R2Score(PairedMetric):
    """Coefficient of determination ``1 - SS_res / SS_tot`` of each output, then their mean."""

    name = "r2_score"
    single_output = False
    vectorized = True

    def kernel(self, x: np.ndarray, y: np.ndarray) -> float:
        return r2(x, y)

    def rows_kernel(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return r2_rows(x, y)

    def undefined(self, x: np.ndarray, y: np.ndarray) -> str:
        if len(x) < 2:
            return f"{self.name} needs at least 2 examples, got {len(x)}"
        return "the references are constant: R² divides by their variance (scikit-learn reports 1.0 or 0.0)"


@register_metric
class Pearson(PairedMetric):
    """Pearson's correlation coefficient of predictions and references."""

    name = "pearson"
    vectorized = True

    def kernel(self, x: np.ndarray, y: np.ndarray) -> float:
        return pearson(x, y)

    def rows_kernel(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pearson_rows(x, y)


@register_metric
class Spearman(PairedMetric):
    """Spearman's rank correlation: Pearson's r of the average ranks."""

    name = "spearman"

    def kernel(self, x: np.ndarray, y: np.ndarray) -> float:
        return spearman(x, y)


@register_metric
class KendallTau(PairedMetric):
    """Kendall's tau-b: concordant minus discordant pairs, ties corrected."""

    name = "kendall_tau"

    def kernel(self, x: np.ndarray, y: np.ndarray) -> float:
        return kendall_tau_b(x, y)
