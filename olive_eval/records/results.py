"""The result objects that results.json serializes, and the atomic write."""

from __future__ import annotations

import functools
import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from olive_eval.records.plain import plain
from olive_eval.records.results_text import results_text
from olive_eval.records.sequential import SequentialPass

RESULTS_FILE = "results.json"


@dataclass
class GoalResult:
    type: str
    value: float
    threshold: float | None  # None when a relative goal has no baseline value to resolve against
    met: bool
    #: How far short the goal fell, None when met: |threshold - value| for a plain goal; for a goal with a
    #: confidence, the bound's shortfall (-margin_bound), which decided it.
    missed_by: float | None = None
    # Filled for goals with a ``confidence`` (paired bootstrap against the baseline):
    confidence: float | None = None
    change: float | None = None  # candidate - baseline
    change_ci_low: float | None = None  # two-sided interval of the change at ``confidence``
    change_ci_high: float | None = None
    probability: float | None = None  # share of resamples in which the goal holds
    margin: float | None = None  # how far the candidate is past the threshold (negative: short of it)
    margin_bound: float | None = None  # the margin's lower bound at ``confidence``; met iff >= 0
    reason: str | None = None  # why the goal could not be checked (no value, no baseline value)


@dataclass
class ConfidenceInterval:
    method: str
    n_resamples: int
    level: float
    seed: int


@dataclass
class TimingInfo:
    """How a latency or throughput value was measured, and how it compares with the baseline's."""

    runs: int  # timed calls
    rounds: int  # blocks the runs came in (interleaved timing: one per turn of the models)
    warmup_num: int
    loop: Literal["back_to_back", "yield"]
    interleaved: bool
    adaptive: bool
    target_rel_ci: float | None = None
    target_reached: bool | None = None  # adaptive runs: was the interval within target_rel_ci in time?
    loads: int = 1
    #: candidate / baseline value, with a paired-bootstrap interval (over rounds when both were interleaved)
    ratio_to_baseline: float | None = None
    ratio_ci_low: float | None = None
    ratio_ci_high: float | None = None
    ratio_level: float | None = None


#: Significant digits a timed run keeps in results.json: far below timer noise, and a file a third the size.
TIMING_DIGITS = 4


def _significant(value: float) -> float:
    return float(f"{value:.{TIMING_DIGITS}g}")


def _ms(seconds: Iterable[float]) -> list[float]:
    return [_significant(1000.0 * float(s)) for s in seconds]


@dataclass
class TimedRuns:
    """Every timed call of one timing metric of one model, for distributions a reader can look at (the report):
    milliseconds to :data:`TIMING_DIGITS` significant digits, one list per round (interleaved timing: one per turn
    of the models, in the order they ran). Kept once per metric, not per sub-type: every sub-type of the metric
    is a statistic of these runs."""

    batch_size: int
    rounds: list[list[float]]
    unit: str = "ms"
    data_config: str | None = None  # None: dummy inputs from the model's own shapes
    loads: list[float] = field(default_factory=list)  # ms to load the model, once per load
    first_calls: list[float] = field(default_factory=list)  # ms of the first call after each load
    #: Generation runs: each quantity's ms per run (``ttft``, ``tpot``, ``e2e``...), in the same rounds.
    quantities: dict[str, list[list[float]]] = field(default_factory=dict)
    #: The count a rate quantity's time is for (tokens): its rate per run is ``count / seconds``.
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_seconds(
        cls,
        batch_size: int,
        rounds: Iterable[Iterable[float]],
        *,
        data_config: str | None = None,
        loads: Iterable[float] = (),
        first_calls: Iterable[float] = (),
        quantities: Mapping[str, Iterable[Iterable[float]]] | None = None,
        counts: Mapping[str, int] | None = None,
    ) -> TimedRuns:
        """From a timing run's seconds (arrays or lists), rounded to milliseconds."""
        return cls(
            batch_size=int(batch_size),
            rounds=[_ms(r) for r in rounds],
            data_config=data_config,
            loads=_ms(loads),
            first_calls=_ms(first_calls),
            quantities={q: [_ms(r) for r in rs] for q, rs in (quantities or {}).items()},
            counts={q: int(c) for q, c in (counts or {}).items()},
        )


@dataclass
class SubMetricResult:
    value: float | None  # None when the metric failed (``error``) or is undefined on this data (``undefined``)
    priority: int
    higher_is_better: bool | None  # None only for an unranked custom sub-type that does not say
    goal: GoalResult | None = None
    unit: str | None = None
    per_class: list[float | None] | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence_interval: ConfidenceInterval | None = None
    aggregation: str | None = None
    error: str | None = None
    undefined: str | None = None
    timing: TimingInfo | None = None
    #: A structured value beside the scalar (per-class values with names, a curve, a matrix).
    details: Any = None
    #: The standard error the value's own library reported (lm-eval's ``*_stderr``), when it reports one.
    stderr: float | None = None

    @property
    def measured(self) -> bool:
        """A finite value exists (not failed, not undefined)."""
        return self.value is not None and math.isfinite(self.value)


#: ok: every metric measured; partial: some metrics failed, the rest kept; failed: nothing measured
#: (e.g. the model did not load); pending: not reached yet; running: being evaluated (left in results.json
#: when the process died with it); interrupted: stopped by Ctrl-C.
ModelStatus = Literal["ok", "partial", "failed", "pending", "running", "interrupted"]


@dataclass
class ModelResult:
    status: ModelStatus
    error: str | None = None
    metrics: dict[str, SubMetricResult] = field(default_factory=dict)
    #: The headline: the value of the sub-type ``score_name`` names (the run's ``score`` setting, else the sub-type
    #: ranked first), None where not measured. Both None in a results.json from before they were recorded.
    score: float | None = None
    score_name: str | None = None
    #: None for the baseline (goals are relative to it) and while the model is unfinished (not known yet).
    goals_met: bool | None = None
    pareto: bool | None = None  # None while the model is unfinished
    #: What ran, one entry per distinct runtime settings (a metric may override them): the runtime's own
    #: description plus ``metrics``, the metrics that used it.
    runtimes: list[dict[str, Any]] = field(default_factory=list)
    seconds: float | None = None
    #: Wall seconds per stage: "load", "inference:<data config>", "scoring:<data config>", "timing:<data config>".
    stage_seconds: dict[str, float] = field(default_factory=dict)
    #: Each prediction pass: examples, batches, seconds of model calls and of model calls + post-processing,
    #: and notes (e.g. how many generations decoded to nothing).
    passes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: This model's folder under ``instances/`` and ``samples/`` (unique per model, whatever its name).
    folder: str | None = None
    #: Things the numbers depend on that a reader should know (a busy machine during timing).
    warnings: list[str] = field(default_factory=list)
    #: With ``early_stop``: the goal a cheap metric missed, so the expensive metrics were not measured.
    early_stopped: str | None = None
    #: With ``sequential``: per data config, the examples the candidate used and each goal's decision.
    sequential: dict[str, SequentialPass] = field(default_factory=dict)
    #: lm_eval metrics: lm-eval's version, and per task its version, samples hash, n-shot, limit and sample counts.
    lm_eval: dict[str, Any] | None = None
    #: Every timed run of each timing metric (latency, throughput), by metric name. Empty in a results.json
    #: from before it was recorded, and for a model not timed.
    timings: dict[str, TimedRuns] = field(default_factory=dict)
    #: Full tracebacks of the failures, for ``--debug``; not written to results.json.
    tracebacks: list[str] = field(default_factory=list, repr=False)

    @property
    def evaluated(self) -> bool:
        return self.status in ("ok", "partial")

    @property
    def unfinished(self) -> bool:
        """Not evaluated yet, or being evaluated: its goals and Pareto standing are unknown, not false."""
        return self.status in ("pending", "running")


@dataclass
class RunResult:
    baseline: str
    models: dict[str, ModelResult]
    ranking: list[str] = field(default_factory=list)
    best: str | None = None
    objectives: list[str] = field(default_factory=list)
    output_dir: str | None = None
    #: Run-level wall seconds: "setup" (imports, data loading), "models", "timing" (the timing phase).
    stage_seconds: dict[str, float] = field(default_factory=dict)
    #: With ``sequential``: per data config, what the plan decided: which goals stop a pass early, or why it runs in full.
    sequential: dict[str, str] = field(default_factory=dict)
    #: What the numbers were measured with: versions, machine, config hash, start time, seeds.
    environment: dict[str, Any] = field(default_factory=dict)
    #: Files the run could not write (a full disk), each with the OS error; not written to results.json.
    write_errors: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def failed(self) -> list[str]:
        """Models with anything short of a full evaluation (exit code 1)."""
        return [name for name, m in self.models.items() if m.status not in ("ok", "pending")]

    def to_dict(self) -> dict[str, Any]:
        """What results.json holds: ``asdict`` less the write errors and tracebacks, NaN and infinity as strings."""
        return plain(self, _NOT_WRITTEN)

    def write(self, output_dir: Path, durable: bool = True) -> Path:
        """Write results.json atomically: a reader never sees a half-written file (``durable``: see
        :func:`atomic_write_text`)."""
        output_dir.mkdir(parents=True, exist_ok=True)
        target = output_dir / RESULTS_FILE
        return atomic_write_text(target, results_text(self.to_dict()) + "\n", durable)


#: Fields results.json leaves out (JSON has no NaN or infinity: :func:`plain` writes them as strings).
_NOT_WRITTEN = {RunResult: frozenset({"write_errors"}), ModelResult: frozenset({"tracebacks"})}


@functools.cache
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The permissions a new file gets under the process's umask."""
    return 0o666 & ~_umask()


def atomic_write_text(target: Path, text: str, durable: bool = True) -> Path:
    """Write through a temporary file and rename it into place, with the permissions the umask gives
    a new file (``mkstemp`` alone would leave it private, 0600).

    ``durable``: flushed to the disk before the rename (fsync, a few ms), so the file survives a power loss or
    an OS crash. Without it the rename alone still survives a crash of the process (the kernel holds the
    data), which is all an intermediate write (the ``running`` marker) needs.

    The bytes are those a text file opened with ``encoding="utf-8"`` writes (a new line as ``os.linesep``), written
    to the descriptor itself: a text file's buffers cost four more system calls and two objects per write.
    """
    data = (text if os.linesep == "\n" else text.replace("\n", os.linesep)).encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        try:
            left = memoryview(data)
            while left:
                left = left[os.write(fd, left) :]
            os.fchmod(fd, file_mode())
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
