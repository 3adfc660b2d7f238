"""Reductions: several samples of one example (``repeats``) to one per-example score, lm-evaluation-harness's model.

A metric config with ``"repeats": k`` scores k sampled generations of each example, and its ``reduction`` says
how they become one value per example:

* ``take_first`` and ``majority_vote`` reduce the *predictions* (they are the metric filters of those names, run
  after the metric's own filters): the metric then scores one prediction per example. ``majority_vote`` is maj@k.
* ``mean`` and ``pass_at_k`` reduce the *scores*: every sample is scored by the (instance) metric, then ``mean``
  averages an example's scores and ``pass_at_k`` gives the unbiased estimator of the Codex paper (Chen et al.
  2021), ``1 - C(n - c, k) / C(n, k)`` for ``n`` samples of which ``c`` pass (score 1), computed as the product
  ``1 - prod(1 - k / i, i = n - c + 1 .. n)`` (no large binomials), and 1.0 when ``n - c < k``. It is defined for
  ``k <= n`` only.

The kernels are pure functions of arrays; the registry maps a config's ``reduction`` to them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import numpy as np
from pydantic import Field

from olive_eval.registry import Registry
from olive_eval.registry_spec import SpecForm
from olive_eval.strict_model import StrictModel

# --------------------------------------------------------------------------------------------- kernels


def pass_at_k(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """The unbiased pass@k estimate per example, for ``n`` samples of which ``c`` passed; ``k <= n`` everywhere."""
    n, c = np.asarray(n, np.int64), np.asarray(c, np.int64)
    if k < 1:
        raise ValueError(f"pass@k needs k >= 1, got {k}")
    if n.size and int(n.min()) < k:
        first = int(np.argmax(n < k))
        raise ValueError(f"pass@{k} needs at least {k} samples per example; example {first} has {int(n[first])}")
    if np.any((c < 0) | (c > n)):
        raise ValueError("pass@k: every count of passed samples must be between 0 and the samples")
    if n.size == 0:
        return np.zeros(n.shape, np.float64)
    pairs, inverse = np.unique(np.stack([n, c], axis=-1).reshape(-1, 2), axis=0, return_inverse=True)
    values = np.ones(len(pairs), np.float64)
    for i, (ni, ci) in enumerate(pairs.tolist()):
        if ni - ci >= k:
            values[i] = 1.0 - float(np.prod(1.0 - k / np.arange(ni - ci + 1, ni + 1, dtype=np.float64)))
    return values[inverse.reshape(-1)].reshape(n.shape)


def per_example(values: np.ndarray, counts: np.ndarray, reduce: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``reduce`` over each example's run of ``counts[i]`` consecutive ``values`` (``np.add.reduceat`` style)."""
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64) if len(counts) else np.zeros(0, np.int64)
    if np.any(np.asarray(counts) < 1):
        raise ValueError("every example needs at least one sample")
    return reduce(np.asarray(values, np.float64), starts)


def mean_scores(scores: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The mean of each example's sample scores."""
    return per_example(scores, counts, lambda v, s: np.add.reduceat(v, s) if s.size else v[:0]) / np.maximum(
        np.asarray(counts, np.float64), 1
    )


def passed_counts(scores: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """How many of each example's samples passed (score 1); ValueError for a score that is neither 0 nor 1."""
    scores = np.asarray(scores, np.float64)
    bad = np.flatnonzero((scores != 0) & (scores != 1))
    if bad.size:
        raise ValueError(
            f"pass@k counts a sample as passed at score 1 and failed at 0; sample {int(bad[0])} scored "
            f"{scores[bad[0]]:g} (use a pass/fail metric such as exact_match, or the 'mean' reduction)"
        )
    return per_example(scores, counts, lambda v, s: np.add.reduceat(v, s) if s.size else v[:0]).astype(np.int64)


# --------------------------------------------------------------------------------------------- registry


class ReductionParams(StrictModel):
    type: str


class Reduction:
    """Several samples of an example to one. ``prediction_filter`` names the metric filter that reduces the
    predictions (None: the sample scores are reduced by :meth:`reduce`); ``samples_needed`` is the fewest
    samples per example it is defined for."""

    name: ClassVar[str] = ""
    Params: ClassVar[type[ReductionParams]] = ReductionParams
    prediction_filter: ClassVar[str | None] = None

    def __init__(self, params: ReductionParams) -> None:
        self.params = params

    @property
    def samples_needed(self) -> int:
        return 1

    def reduce(self, scores: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """One score per example from the scores of its ``counts[i]`` samples (consecutive in ``scores``)."""
        raise NotImplementedError(f"reduction '{self.name}' reduces predictions, not scores")

    def label(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params.model_dump(exclude={'type'})})"


reduction_registry: Registry[type[Reduction]] = Registry(
    "reduction",
    ("olive_eval.metrics.reductions",),
    group="olive_eval.reductions",
    base=Reduction,
    adopt=lambda name, obj, origin: register_reduction(name)(obj),
    form=SpecForm(
        built=Reduction,
        names=True,
        params=False,
        not_object="expected a reduction name or an object with a 'type', got {got}",
        missing="unknown {kind} {got}; valid: {names}",
        not_text="unknown {kind} {got}; valid: {names}",
        unknown="unknown {kind} {got}{hint}",
    ),
)

R = TypeVar("R", bound=type[Reduction])


def register_reduction(name: str) -> Callable[[R], R]:
    def wrap(cls: R) -> R:
        cls.name = name
        reduction_registry.register(name, cls)
        return cls

    return wrap


@register_reduction("take_first")
class TakeFirst(Reduction):
    """The first sample's prediction (lm-eval's default)."""

    prediction_filter = "take_first"


@register_reduction("majority_vote")
class MajorityVote(Reduction):
    """The most common prediction (maj@k); on a tie, the one seen first."""

    prediction_filter = "majority_vote"


@register_reduction("mean")
class Mean(Reduction):
    """The mean of the sample scores (e.g. the expected accuracy of one sample)."""

    def reduce(self, scores: np.ndarray, counts: np.ndarray) -> np.ndarray:
        return mean_scores(scores, counts)


class PassAtKParams(ReductionParams):
    k: int = Field(1, ge=1, description="pass@k: the chance that one of k samples (of the n drawn) passes.")


@register_reduction("pass_at_k")
class PassAtK(Reduction):
    """The unbiased pass@k estimator over the samples that passed (score 1)."""

    Params = PassAtKParams
    params: PassAtKParams

    @property
    def samples_needed(self) -> int:
        return self.params.k

    def reduce(self, scores: np.ndarray, counts: np.ndarray) -> np.ndarray:
        return pass_at_k(np.asarray(counts), passed_counts(scores, counts), self.params.k)

    def label(self) -> str:
        return f"pass@{self.params.k}"


def build_reduction(spec: str | dict[str, Any] | Reduction, path: str = "reduction") -> Reduction:
    """A reduction from its name or ``{"type": name, ...params}``; ValueError as ``"<path>[.key]: message"``."""
    return reduction_registry.build(spec, path)  # type: ignore[no-any-return]
