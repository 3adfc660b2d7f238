"""The report of a sequential run draws each candidate's bounds against the examples seen."""

from __future__ import annotations

from olive_eval import evaluate
from tests.engine.sequential_sweep import Sweep

from .conftest import report


def test_each_candidates_bounds_are_drawn_at_every_look(tmp_path):
    sweep = Sweep(tmp_path / "sweep", n=2000)
    result = evaluate(sweep.config({"good": 0.96, "bad": 0.6, "edge": 0.88}, sequential={"min_examples": 100}))
    page, figures = report(sweep.root / "out")
    assert "id='sec-sequential'" in page and "href='#sec-sequential'" in page
    traces = figures["sequential-acc-accuracy_score"]["data"]
    for name in ("good", "bad", "edge"):
        decision = result.models[name].sequential["d"].goals["acc-accuracy_score"]
        lower, upper = (t for t in traces if t["legendgroup"] == name)
        assert lower["x"] == upper["x"] == [look[0] for look in decision.looks]
        assert lower["y"] == [look[1] for look in decision.looks] and upper["y"] == [look[2] for look in decision.looks]
        assert lower["name"] == f"{name} ({decision.state} after {decision.examples:,})"
    assert not any(t["legendgroup"] == "base" for t in traces)  # the baseline runs in full: no band


def test_a_run_without_sequential_has_no_such_section(tmp_path):
    sweep = Sweep(tmp_path / "sweep", n=300)
    evaluate(sweep.config({"good": 0.96}))
    page, figures = report(sweep.root / "out")
    assert "sec-sequential" not in page and not any(key.startswith("sequential") for key in figures)
