"""The report from the command line (``olive-eval report OUTPUT_DIR``, ``--report`` on a run) and from a
session (``Evaluation.report()``): where the page goes, and one-line errors with exit 2 for what cannot work."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from olive_eval import Evaluation
from olive_eval.cli import main
from olive_eval.records.output_dir import REPORT_GENERATOR


def accuracy() -> list[dict]:
    goal = {"type": "max-degradation", "value": 0.5}
    return [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1, "goal": goal}]}]


def run_config(toy) -> Path:
    path = toy.root / "run.json"
    path.write_text(json.dumps(toy.config({"cand": 0.05}, accuracy())))
    return path


def is_our_page(page: Path, *names: str) -> bool:
    text = page.read_text(encoding="utf-8")
    return REPORT_GENERATOR in text[:4096] and all(name in text for name in names)


def test_report_writes_the_page_beside_results_json_and_says_where(toy, capsys) -> None:
    out = toy.root / "out"
    assert main(["--config", str(run_config(toy)), "--quiet", "--output-dir", str(out)]) == 0
    assert not (out / "report.html").exists()  # only when asked
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"Report: {out / 'report.html'}"
    assert is_our_page(out / "report.html", "base", "cand")


def test_report_on_a_run_writes_the_page_after_the_table(toy, capsys) -> None:
    out = toy.root / "out"
    assert main(["--config", str(run_config(toy)), "--quiet", "--report", "--output-dir", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert stdout.rstrip().endswith(f"Report: {out / 'report.html'}")
    assert "Best candidate: cand" in stdout
    assert is_our_page(out / "report.html", "cand")


def test_report_without_plotly_fails_before_any_model_runs(toy, capsys, monkeypatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "plotly" else real(name, *a))
    out = toy.root / "out"
    assert main(["--config", str(run_config(toy)), "--report", "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == "olive-eval: error: --report needs the 'plotly' package; install it with: pip install 'olive-eval[report]'\n"
    )
    assert not out.exists()


def test_report_errors_are_one_line_with_exit_2(tmp_path, capsys) -> None:
    assert main(["report"]) == 2
    assert capsys.readouterr().err == "olive-eval: error: give the run's output folder: olive-eval report OUTPUT_DIR\n"

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["report", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(empty / "results.json") in err and "no results.json" in err

    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "results.json").write_text('{"baseline": "base", "models": {"base": {"status": "o')
    assert main(["report", str(cut)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not valid JSON" in err and str(cut / "results.json") in err
    assert not (cut / "report.html").exists()


def test_a_stray_argument_to_a_run_is_a_usage_error(toy, capsys) -> None:
    assert main(["run", "--config", str(run_config(toy)), "extra.json"]) == 2
    assert capsys.readouterr().err == "olive-eval: error: unexpected argument 'extra.json' (see olive-eval --help)\n"


def test_a_session_reports_the_standing_between_candidates(toy) -> None:
    config = toy.config({}, accuracy())
    with Evaluation(config, output_dir=toy.root / "loop") as session:
        session.baseline()
        session.evaluate(
            {"type": "ONNXModel", "name": "cand_one_qz", "model_path": str(toy.model("cand_one_qz", 0.05))}
        )
        page = session.report()
        assert page == toy.root / "loop" / "report.html"
        assert is_our_page(page, "cand_one_qz") and "cand_two_qz" not in page.read_text(encoding="utf-8")
        session.evaluate({"type": "ONNXModel", "name": "cand_two_qz", "model_path": str(toy.model("cand_two_qz", 0.1))})
        elsewhere = session.report(toy.root / "standing.html")
    assert elsewhere == toy.root / "standing.html" and is_our_page(elsewhere, "cand_one_qz", "cand_two_qz")


def test_a_fault_in_the_report_is_one_line_and_the_runs_results_stand(toy, capsys, monkeypatch) -> None:
    import olive_eval.report.html.page as page

    def broken(*args, **kwargs):
        raise KeyError("index")

    monkeypatch.setattr(page, "build_page", broken)
    out = toy.root / "out"
    assert main(["--config", str(run_config(toy)), "--quiet", "--report", "--output-dir", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "olive-eval: error: the report could not be written: KeyError: 'index' at test_cli_report.py:"
    )
    assert err.count("\n") == 1 and (out / "results.json").is_file() and not (out / "report.html").exists()
    assert main(["report", str(out)]) == 1
    assert capsys.readouterr().err.count("\n") == 1
