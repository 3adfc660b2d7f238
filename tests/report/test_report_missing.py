"""What a run did not leave is said on the page, and the rest is still drawn."""

from __future__ import annotations

import json
from pathlib import Path

from olive_eval.records.results import ModelResult

from .conftest import report
from .helpers import failed_and_untimed_run, instances, model, small_run, sub


def _missing_section(page: str) -> str:
    return page[page.index("<section id='sec-missing'>") :]


def test_a_failed_model_and_a_model_without_timings(tmp_path: Path) -> None:
    failed_and_untimed_run(tmp_path)
    page, figures = report(tmp_path)
    assert "the model did not load: boom" in page
    latency = figures["timing-latency"]["data"]
    assert sum(len(t["y"]) for t in latency if t["name"].startswith("round")) == 8  # the baseline's runs
    missing = _missing_section(page)
    assert "broken: failed: the model did not load: boom" in missing
    assert "untimed: no timed runs recorded" in missing
    assert figures["pareto"]["data"][1]["x"] == [0.95, None, 0.93]  # no value for the failed model


def test_structured_values_only(tmp_path: Path) -> None:
    matrix = {"confusion_matrix": {"a": {"a": 1, "b": 0}, "b": {"a": 0, "b": 1}}}
    models = {
        n: ModelResult("ok", metrics={"cm-confusion_matrix": sub(None, details=matrix, undefined="structured")})
        for n in ("base", "cand")
    }
    small_run(tmp_path, models)
    page, figures = report(tmp_path)
    assert "pareto" not in figures and "fewer than two metrics have a numeric value" in page
    assert "confusion-cm-confusion_matrix" in figures
    assert "No timing metric in this run." in page


def test_a_missing_instance_file_is_noted_and_the_rest_drawn(tmp_path: Path) -> None:
    small_run(tmp_path, {"base": model("base", 0.9, 2.0), "a": model("a", 0.8, 1.0), "b": model("b", 0.85, 1.5)})
    instances(tmp_path, "base", "acc", [1.0, 1.0, 0.0], ["x", "y", "z"])
    instances(tmp_path, "a", "acc", [0.0, 1.0, 1.0], ["wrong", "y", "z"])
    page, figures = report(tmp_path)
    assert "b: instances/b/acc.parquet is missing" in _missing_section(page)
    assert "1 flipped right → wrong, 1 wrong → right" in page  # candidate a, still compared
    assert "<code>wrong</code>" in page
    assert {"pareto", "timing-latency"} <= set(figures)


def test_a_run_without_instance_files(quickstart_run: Path, tmp_path: Path) -> None:
    (tmp_path / "results.json").write_bytes((quickstart_run / "results.json").read_bytes())  # results from a cache
    page, figures = report(tmp_path)
    assert "no instance files for the baseline" in _missing_section(page)
    assert {"pareto", "timing-latency"} <= set(figures)


def test_an_older_results_json_without_timings(quickstart_run: Path, tmp_path: Path) -> None:
    data = json.loads((quickstart_run / "results.json").read_text())
    for m in data["models"].values():
        del m["timings"]
    (tmp_path / "results.json").write_text(json.dumps(data))
    page, figures = report(tmp_path)
    assert not any(key.startswith("timing-") for key in figures)
    assert "Timing values without their timed runs" in page
    assert "digits_int8: latency-p50" in page
    assert "pareto" in figures
