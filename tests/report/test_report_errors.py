"""Bad input: one line naming the file, as a UsageError (the CLI's exit 2); a missing plotly names the extra."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from olive_eval.errors import MissingDependencyError, UsageError
from olive_eval.report.html import bundle, write_report

from .helpers import model, small_run


def test_a_folder_without_results_json(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"results\.json") as info:
        write_report(tmp_path)
    assert str(tmp_path) in str(info.value) and "\n" not in str(info.value)


def test_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no results\.json"):
        write_report(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"baseline": "a", "models": {"a": {"status": "ok", "metr', "not valid JSON"),
        ('{"accuracy": 0.9}', "not an olive-eval results file"),
        ("[1, 2]", "not an olive-eval results file"),
        ('{"baseline": "a", "models": {"a": {"colour": 1}}}', "not an olive-eval results file"),
    ],
)
def test_a_results_json_truncated_or_not_ours(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / "results.json").write_text(text)
    with pytest.raises(UsageError, match=says) as info:
        write_report(tmp_path)
    assert str(tmp_path / "results.json") in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "report.html").exists()


def test_without_plotly_one_line_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small_run(tmp_path, {"base": model("base", 0.9, 2.0)})
    bundle.plotly_gzip_base64.cache_clear()
    monkeypatch.setitem(sys.modules, "plotly", None)
    monkeypatch.setitem(sys.modules, "plotly.offline", None)
    try:
        with pytest.raises(MissingDependencyError, match=r"olive-eval\[report\]"):
            write_report(tmp_path)
    finally:
        bundle.plotly_gzip_base64.cache_clear()


def test_the_report_can_go_elsewhere(tmp_path: Path) -> None:
    small_run(tmp_path, {"base": model("base", 0.9, 2.0)})
    out = write_report(tmp_path / "results.json", tmp_path / "sub" / "r.html")
    assert out == tmp_path / "sub" / "r.html" and out.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["r.html"]  # no temporary file left
