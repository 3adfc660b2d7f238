"""transformers', Ray's and Olive's log lines and warnings stay off a run's terminal output and go to the run's
log file (issue 29, docs item)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from olive_eval.records.run_log import LOG_FILE, RunLog


@pytest.fixture(autouse=True)
def loggers_that_emit():
    """Olive sets its logger's severity when a workflow runs (an earlier test's): these tests log warnings."""
    saved = {name: (logging.getLogger(name).level, logging.getLogger(name).disabled) for name in ("olive", "ray")}
    for name in saved:
        logging.getLogger(name).setLevel(logging.INFO)
        logging.getLogger(name).disabled = False
    yield
    for name, (level, disabled) in saved.items():
        logging.getLogger(name).setLevel(level)
        logging.getLogger(name).disabled = disabled


#: Imports the libraries first (each gives its logger its own handler: stderr, Olive's stdout), then logs from
#: each while the run evaluates a model, and raises a warning from a file of transformers' package.
CHILD = """
import logging, sys, warnings
import olive.logging, ray, transformers
from transformers.utils import logging as hf_logging
hf_logging.get_logger("transformers.generation")
from olive_eval.engine.run.run import Run
from olive_eval.cli import main
real = Run.evaluate
def evaluate(self, model, *args, **kwargs):
    for name in ("transformers.generation", "ray", "olive"):
        logging.getLogger(name).warning("noise from %s", name)
    warnings.warn_explicit("a FutureWarning of transformers'", FutureWarning, transformers.__file__, 7)
    return real(self, model, *args, **kwargs)
Run.evaluate = evaluate
code = main(["--config", sys.argv[1], "--no-progress", "--no-cache", "--output-dir", sys.argv[2]])
logging.getLogger("transformers.generation").warning("after the run")
sys.exit(code)
"""


def test_third_party_log_lines_and_warnings_go_to_the_log_file_not_the_terminal(toy, tmp_path):
    config = toy.root / "run.json"
    metrics = [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}]
    config.write_text(json.dumps(toy.config({"cand": 0.1}, metrics)))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(config), str(out)], capture_output=True, text=True, env=env, timeout=300
    )
    assert child.returncode == 0, child.stderr
    terminal = child.stdout + child.stderr
    assert "noise from" not in terminal and "FutureWarning" not in terminal
    assert "base: loading model" in child.stderr  # the run's own lines still show
    log = (out / LOG_FILE).read_text()
    for name in ("transformers.generation", "ray", "olive"):
        assert log.count(f"WARNING {name}: noise from {name}") == 2  # once per model
    assert log.count("FutureWarning: a FutureWarning of transformers'") == 2
    assert "after the run" in child.stderr  # the libraries' own handlers are back once the run is over


def test_a_handler_a_library_adds_during_the_run_is_held_back_and_given_back(tmp_path):
    logger = logging.getLogger("ray")
    before, propagate = list(logger.handlers), logger.propagate
    added = logging.StreamHandler()
    log = RunLog(tmp_path / LOG_FILE)
    log.open()
    try:
        logger.addHandler(added)  # as a library imported mid-run configures its logger
        logger.warning("held")
        assert added not in logger.handlers[:] and len(logger.handlers) == 1
    finally:
        log.close()
    try:
        assert logger.handlers == [*before, added] and logger.propagate == propagate
        assert "WARNING ray: held" in (tmp_path / LOG_FILE).read_text()
    finally:
        logger.removeHandler(added)


def test_two_run_logs_open_at_once_each_give_back_what_they_held(tmp_path):
    logger = logging.getLogger("olive")
    before = list(logger.handlers)
    added = logging.StreamHandler()
    first, second = RunLog(tmp_path / "first.log"), RunLog(tmp_path / "second.log")
    first.open()
    second.open()
    logger.addHandler(added)
    logger.warning("to the second")
    second.close()
    assert added not in logger.handlers[:]  # still held back by the first
    logger.warning("to the first")
    first.close()
    try:
        assert logger.handlers == [*before, added]
        assert "to the second" in (tmp_path / "second.log").read_text()
        assert "to the first" in (tmp_path / "first.log").read_text()
    finally:
        logger.removeHandler(added)


def test_between_a_sessions_calls_the_hosts_loggers_are_its_own(toy, tmp_path, monkeypatch):
    """Inside ``olive run`` a session stays open for the whole workflow: only its work is routed to the file,
    so what Olive logs between olive-eval's calls reaches Olive's own handlers (and a session's second block of
    work appends to the file the first one wrote)."""
    from olive_eval.engine.run.run import Run
    from olive_eval.engine.session.session import Evaluation

    metrics = [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}]
    config = toy.config({}, metrics)
    logger = logging.getLogger("olive")
    seen: list[str] = []
    host = logging.Handler()
    host.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(host)
    try:
        with Evaluation(config, output_dir=tmp_path / "out", cache=False) as session:
            session.baseline()
            logger.warning("the host between calls")
            real = Run.evaluate

            def noisy(self, model, *args, **kwargs):
                logger.warning("noise during the work")
                return real(self, model, *args, **kwargs)

            monkeypatch.setattr(Run, "evaluate", noisy)
            session.evaluate({"type": "ONNXModel", "name": "cand", "model_path": str(toy.model("cand", 0.1))})
            logger.warning("the host after the work")
    finally:
        logger.removeHandler(host)
    assert seen == ["the host between calls", "the host after the work"]
    assert (tmp_path / "out" / LOG_FILE).read_text().count("WARNING olive: noise during the work") == 1
