"""Runs of the shipped quickstart and confidence configs and of the toy problem with fidelity metrics (once per
session), and helpers to read a report."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from olive_eval import evaluate
from olive_eval.report.html import write_report
from tests.helpers import ToyProblem

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def own_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A result cache of its own for a session fixture's run (the per-test one is not set up yet)."""
    previous = os.environ.get("OLIVE_EVAL_CACHE_DIR")
    os.environ["OLIVE_EVAL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("OLIVE_EVAL_CACHE_DIR", None)
        else:
            os.environ["OLIVE_EVAL_CACHE_DIR"] = previous


def _run(tmp_path_factory: pytest.TempPathFactory, config: str) -> Path:
    out = tmp_path_factory.mktemp(config)
    with own_cache(tmp_path_factory):
        evaluate(REPO / "configs" / f"{config}.json", output_dir=out)
    return out


@pytest.fixture(scope="session")
def quickstart_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory, "quickstart")


@pytest.fixture(scope="session")
def confidence_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory, "confidence")


#: Accuracy, size (neither accuracy nor fidelity) and fidelity with intervals and a goal, on the toy problem.
FIDELITY_METRICS = [
    {"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]},
    {"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]},
    {
        "name": "fid",
        "type": "fidelity",
        "confidence_interval": {"level": 0.95, "seed": 1},
        "sub_types": [
            {"name": "top1_agreement", "priority": 2, "goal": {"type": "threshold", "value": 0.9}},
            {"name": "kl_divergence"},
            {"name": "cosine_similarity"},
            {"name": "topk_agreement", "metric_config": {"k": 2}},
        ],
    },
]


@pytest.fixture(scope="session")
def fidelity_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy problem's baseline and two candidates (a little and much weight noise) with fidelity metrics."""
    root = tmp_path_factory.mktemp("fidelity")
    with own_cache(tmp_path_factory):
        evaluate(ToyProblem(root).config({"near": 0.05, "far": 0.8}, FIDELITY_METRICS))
    return root / "out"


def script_json(page: str, element_id: str) -> Any:
    match = re.search(rf"<script type='application/json' id='{element_id}'>(.*?)</script>", page, re.S)
    assert match is not None, f"no {element_id} in the page"
    return json.loads(match.group(1))


def report(output_dir: Path) -> tuple[str, dict[str, Any]]:
    """The page's text and its figures by chart id."""
    page = write_report(output_dir).read_text(encoding="utf-8")
    return page, script_json(page, "oe-figures")
