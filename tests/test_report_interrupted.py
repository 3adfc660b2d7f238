"""Ctrl-C while the report is written: exit 130 and one line, results.json kept, no page and no temporary file
left, wherever it lands, even where a library swallows the KeyboardInterrupt (issue 29, item 5)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from olive_eval.cli import main
from olive_eval.report.html import page


def accuracy() -> list[dict]:
    return [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]}]


def config(toy) -> Path:
    path = toy.root / "run.json"
    path.write_text(json.dumps(toy.config({"cand": 0.05}, accuracy())))
    return path


def listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def interrupt() -> None:
    raise KeyboardInterrupt


def swallowed_then_broken() -> None:
    """A library that catches the KeyboardInterrupt (a bare ``except``) and fails later on the half-imported module."""
    with contextlib.suppress(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    raise AttributeError("partially initialized module 'pandas' has no attribute 'DataFrame'")


def swallowed_quietly() -> None:
    with contextlib.suppress(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)


def patch_point(monkeypatch, where: str, act: Callable[[], None]) -> None:
    """Run ``act`` at one point of the report's writing."""
    if where == "loading":
        real_load = page.load_run

        def load(output_dir):
            act()
            return real_load(output_dir)

        monkeypatch.setattr(page, "load_run", load)
    elif where == "building":
        real_build = page.build_page

        def build(folder, result):
            text = real_build(folder, result)
            act()
            return text

        monkeypatch.setattr(page, "build_page", build)
    elif where == "renaming":  # the page is in its temporary file, about to be moved into place
        real_replace = os.replace

        def replace(src, dst, *args, **kwargs):
            if Path(dst).name == "report.html":
                act()
            return real_replace(src, dst, *args, **kwargs)

        monkeypatch.setattr(os, "replace", replace)


POINTS = [
    ("loading", interrupt),
    ("building", interrupt),
    ("renaming", interrupt),
    ("building", swallowed_then_broken),
    ("building", swallowed_quietly),
]


@pytest.mark.parametrize(("where", "act"), POINTS)
def test_ctrl_c_while_the_report_command_writes(toy, capsys, monkeypatch, where, act):
    out = toy.root / "out"
    assert main(["--config", str(config(toy)), "--quiet", "--no-cache", "--output-dir", str(out)]) == 0
    before = listing(out)
    capsys.readouterr()
    patch_point(monkeypatch, where, act)
    assert main(["report", str(out)]) == 130
    captured = capsys.readouterr()
    assert captured.err == "olive-eval: interrupted while writing the report; report.html was not written\n"
    assert captured.out == ""
    assert listing(out) == before  # results.json as it was, no page, no temporary file


@pytest.mark.parametrize(("where", "act"), POINTS)
def test_ctrl_c_while_a_run_writes_its_report(toy, capsys, monkeypatch, where, act):
    out = toy.root / "out"
    patch_point(monkeypatch, where, act)
    assert main(["--config", str(config(toy)), "--quiet", "--no-cache", "--report", "--output-dir", str(out)]) == 130
    captured = capsys.readouterr()
    results = out / "results.json"
    assert captured.err == (
        f"olive-eval: interrupted while writing the report; {results} holds the run's results; "
        "report.html was not written\n"
    )
    assert "Best candidate: cand" in captured.out and "Report:" not in captured.out
    assert set(json.loads(results.read_text())["models"]) == {"base", "cand"}
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == [".olive-eval", ".olive-eval.lock", "results.json"]


SLOW_PAGE = """
import sys, time
from pathlib import Path
from olive_eval.report.html import page
real = page.build_page
def build(folder, result):
    text = real(folder, result)
    Path(sys.argv[1]).write_text("building")
    time.sleep(60)
    return text
page.build_page = build
from olive_eval.cli import main
sys.exit(main(["report", sys.argv[2]]))
"""


def test_a_real_sigint_while_the_page_is_built(toy, capsys, tmp_path):
    out = toy.root / "out"
    assert main(["--config", str(config(toy)), "--quiet", "--no-cache", "--output-dir", str(out)]) == 0
    before = listing(out)
    ready = tmp_path / "ready"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    child = subprocess.Popen(
        [sys.executable, "-c", SLOW_PAGE, str(ready), str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 60
    while not ready.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists(), child.communicate()
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 130
    assert stderr == "olive-eval: interrupted while writing the report; report.html was not written\n"
    assert stdout == "" and listing(out) == before


def test_ctrl_c_while_the_table_is_printed_after_the_run(toy, capsys, monkeypatch):
    import olive_eval.report.console as console

    monkeypatch.setattr(console, "render", lambda result: interrupt())
    out = toy.root / "out"
    assert main(["--config", str(config(toy)), "--quiet", "--no-cache", "--report", "--output-dir", str(out)]) == 130
    results = out / "results.json"
    assert capsys.readouterr().err == f"olive-eval: interrupted after the run; {results} holds the run's results\n"
    assert set(json.loads(results.read_text())["models"]) == {"base", "cand"} and not (out / "report.html").exists()
