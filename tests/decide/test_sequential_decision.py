"""Decisions at chunk ends: equal to the full data's on clear candidates with fewer examples, open (to the end) when
the data cannot decide, only the checkpoints looked at; and the issue's negative: a percentile bootstrap repeated at
every chunk end keeps a boundary candidate far more often than alpha, the confidence sequence does not."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from olive_eval.decide.sequential.confidence_sequence import mean_confidence_sequence
from olive_eval.decide.sequential.decision import MET, MISSED, OPEN, decide, decide_many, doubling_checkpoints
from olive_eval.decide.sequential.goal_margins import Margins, goal_margins
from tests.decide.sequential_simulation import paired_accuracy_margins, repeated_bootstrap

METHODS = ("betting", "empirical_bernstein")


def paired(rng: np.random.Generator, n: int, base: float, flip: float, gain: float) -> tuple[np.ndarray, np.ndarray]:
    """Baseline 0/1 correctness at ``base``; the candidate flips a share ``flip`` of the baseline's answers and
    fixes a share ``gain`` of its errors."""
    b = (rng.random(n) < base).astype(float)
    c = np.where(b == 1, rng.random(n) >= flip, rng.random(n) < gain).astype(float)
    return c, b


@pytest.mark.parametrize("method", METHODS)
def test_clear_candidates_decide_as_the_full_data_with_fewer_examples(method):
    rng = np.random.default_rng(12)
    n, seen = 6000, []
    for flip, gain in [(0.005, 0.3), (0.2, 0.0), (0.01, 0.4), (0.3, 0.05)] * 3:
        c, b = paired(rng, n, 0.85, flip, gain)
        margins = goal_margins("max-degradation", 0.02, c, b, True, 0.0, 1.0)
        decision = decide(margins, 0.05, doubling_checkpoints(n, 200), method)
        full = "met" if c.mean() >= b.mean() - 0.02 else "missed"
        assert decision.state == full
        seen.append(decision.examples)
    assert max(seen) < n and np.mean(seen) < 0.3 * n


@pytest.mark.parametrize("method", METHODS)
def test_a_candidate_at_the_threshold_runs_to_the_end_open(method):
    z = np.tile([-0.5, 0.5], 300)  # mean exactly 0
    decision = decide(Margins(z, -1.0, 1.0), 0.05, [100, 200, 400, 600], method)
    assert (decision.state, decision.examples) == ("open", 600)
    assert decision.lower < 0.0 <= decision.upper


@pytest.mark.parametrize("method", METHODS)
def test_the_decision_reports_the_sequence_at_its_checkpoint(method):
    rng = np.random.default_rng(1)
    for shift in (0.15, -0.15, 0.0):
        z = np.clip(rng.normal(shift, 0.4, 3000), -1, 1)
        decision = decide(Margins(z, -1.0, 1.0), 0.05, doubling_checkpoints(3000, 100), method)
        lower, upper = mean_confidence_sequence(z[: decision.examples], -1.0, 1.0, 0.05, method, points=[0.0])
        assert decision.lower == pytest.approx(lower[-1], abs=1e-12)
        assert decision.upper == pytest.approx(upper[-1], abs=1e-12)
        assert decision.state == {1: "met", -1: "missed", 0: "open"}[int(np.sign(shift))]
        assert (decision.lower >= 0) == (decision.state == "met") and (decision.upper < 0) == (
            decision.state == "missed"
        )


def test_only_the_checkpoints_are_looked_at():
    z = np.full(1000, 0.5)
    everywhere = decide(Margins(z, -1.0, 1.0), 0.05, list(range(1, 1001)))
    assert everywhere.state == "met" and 1 < everywhere.examples < 100
    late = decide(Margins(z, -1.0, 1.0), 0.05, [everywhere.examples - 1, 900])
    assert (late.state, late.examples) == ("met", 900)
    early = decide(Margins(z, -1.0, 1.0), 0.05, [everywhere.examples - 1])
    assert (early.state, early.examples) == ("open", everywhere.examples - 1)


@pytest.mark.parametrize("method", METHODS)
def test_decide_many_equals_decide_row_by_row(method):
    z, _ = paired_accuracy_margins(np.random.default_rng(2), 20, 3000, 0.03, 0.035, 0.0)
    state, examples = decide_many(z, -1.0, 1.0, 0.05, [300, 1000, 3000], method)
    for row in range(len(z)):
        decision = decide(Margins(z[row], -1.0, 1.0), 0.05, [300, 1000, 3000], method)
        code = {"met": MET, "missed": MISSED, "open": OPEN}[decision.state]
        assert (code, decision.examples) == (state[row], examples[row])
    assert len(set(state.tolist())) > 1


def test_repeated_bootstrap_inflates_the_false_keep_rate_and_the_sequence_does_not():
    """Boundary candidates (population mean of z exactly 0: the worst case of 'not met'), a look every 100
    examples: the share kept ('met') by the repeated 95% bootstrap is far above 5%; the CS's stays below."""
    rng = np.random.default_rng(33)
    runs, n, alpha = 300, 3000, 0.05
    z, values = paired_accuracy_margins(rng, runs, n, 0.04, 0.03, 0.01)
    checkpoints = list(range(100, n + 1, 100))
    boot, _ = repeated_bootstrap(rng, z, values, alpha, checkpoints, resamples=300)
    boot_kept = int(np.count_nonzero(boot == MET))
    assert stats.binomtest(boot_kept, runs).proportion_ci(0.999, method="exact").low > alpha
    for method in METHODS:  # each side of the sequence spends alpha / 2
        state, _ = decide_many(z, values[0], values[2], alpha, checkpoints, method)
        assert int(np.count_nonzero(state == MET)) <= int(stats.binom.ppf(1 - 1e-4, runs, alpha / 2))


def test_bad_checkpoints_are_one_line_errors():
    margins = Margins(np.zeros(10), -1.0, 1.0)
    for checkpoints in ([], [0, 5], [5, 5], [6, 3], [5, 11]):
        with pytest.raises(
            ValueError, match=r"^checkpoints must (be a non-empty list|increase strictly within 1\.\.10)"
        ):
            decide(margins, 0.05, checkpoints)
    with pytest.raises(ValueError, match=r"^decide takes one sequence of margins, got shape \(2, 5\)$"):
        decide(Margins(np.zeros((2, 5)), -1.0, 1.0), 0.05, [5])
    with pytest.raises(ValueError, match=r"^alpha must be in \(0, 1\)"):
        decide(margins, 1.0, [10])


@pytest.mark.parametrize(("n", "first"), [(10000, 500), (1000, 1000), (5, 10), (1, 1), (777, 3)])
def test_doubling_checkpoints_double_from_the_first_to_the_end(n, first):
    ends = doubling_checkpoints(n, first)
    assert ends[0] == min(first, n) and ends[-1] == n
    assert all(b == 2 * a for a, b in itertools.pairwise(ends[:-1]))
    assert all(a < b <= 2 * a for a, b in itertools.pairwise(ends))
    with pytest.raises(ValueError, match=r"^need at least one example per chunk and in all, got first=0"):
        doubling_checkpoints(n, 0)


def test_margins_that_cannot_be_negative_are_met_at_the_first_look():
    z = np.random.default_rng(0).uniform(0.0, 1.0, 50)
    met = decide(Margins(z, 0.0, 1.0), 0.05, [10, 50])
    assert (met.state, met.examples) == ("met", 10) and met.lower >= 0.0
    missed = decide(Margins(z - 2.0, -2.0, -1.0), 0.05, [10, 50], "empirical_bernstein")
    assert (missed.state, missed.examples) == ("missed", 10) and missed.upper < 0.0


def test_the_calibration_bench_passes_on_fewer_runs():
    """bench/bench_sequential_calibration.py exits 1 when a sequence keeps boundary candidates above alpha or
    contradicts the full data on a clear candidate."""
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "bench/bench_sequential_calibration.py", "--runs", "60", "--n", "3000"]
    command += ["--min-examples", "200", "--resamples", "100"]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith(("boundary", "clear"))]
    assert len(rows) == 9


def test_the_method_takes_effect():
    z = np.clip(np.random.default_rng(4).normal(0.05, 0.5, 4000), -1, 1)
    betting = decide(Margins(z, -1.0, 1.0), 0.05, [4000], "betting")
    bernstein = decide(Margins(z, -1.0, 1.0), 0.05, [4000], "empirical_bernstein")
    assert betting.upper - betting.lower != pytest.approx(bernstein.upper - bernstein.lower, rel=1e-3)
    with pytest.raises(ValueError, match=r"^unknown confidence sequence method 'plain'"):
        decide(Margins(z, -1.0, 1.0), 0.05, [4000], "plain")
