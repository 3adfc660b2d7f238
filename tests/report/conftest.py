"""Runs of the shipped quickstart and confidence configs (once per session), and helpers to read a report."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from olive_eval import evaluate
from olive_eval.report.html import write_report

REPO = Path(__file__).resolve().parents[2]


def _run(tmp_path_factory: pytest.TempPathFactory, config: str) -> Path:
    out = tmp_path_factory.mktemp(config)
    previous = os.environ.get("OLIVE_EVAL_CACHE_DIR")
    os.environ["OLIVE_EVAL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    try:
        evaluate(REPO / "configs" / f"{config}.json", output_dir=out)
    finally:
        if previous is None:
            os.environ.pop("OLIVE_EVAL_CACHE_DIR", None)
        else:
            os.environ["OLIVE_EVAL_CACHE_DIR"] = previous
    return out


@pytest.fixture(scope="session")
def quickstart_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory, "quickstart")


@pytest.fixture(scope="session")
def confidence_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory, "confidence")


def script_json(page: str, element_id: str) -> Any:
    match = re.search(rf"<script type='application/json' id='{element_id}'>(.*?)</script>", page, re.S)
    assert match is not None, f"no {element_id} in the page"
    return json.loads(match.group(1))


def report(output_dir: Path) -> tuple[str, dict[str, Any]]:
    """The page's text and its figures by chart id."""
    page = write_report(output_dir).read_text(encoding="utf-8")
    return page, script_json(page, "oe-figures")
