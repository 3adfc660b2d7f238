"""Imports run down the floors of the house (docs: ARCHITECTURE): the data floor never imports the runtimes or
anything above them, and metrics made from functions rebuild themselves without importing the registration
module that imports them. Every import counts, those inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

import olive_eval

ROOT = Path(olive_eval.__file__).parent


def imports_of(path: Path) -> set[str]:
    """The olive_eval modules a file imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("olive_eval")}


def test_the_data_floor_imports_nothing_above_it():
    above = ("olive_eval.runtimes", "olive_eval.engine", "olive_eval.config", "olive_eval.api", "olive_eval.cli")
    offending = {
        str(path.relative_to(ROOT)): sorted(name for name in imports_of(path) if name.startswith(above))
        for path in sorted((ROOT / "data").glob("*.py"))
    }
    assert {path: names for path, names in offending.items() if names} == {}


def test_records_and_decisions_import_only_the_base_below_them():
    """records/ (results.json, per-example records, the output folder) and decide/ (goals, ranking, Pareto) sit
    under the engine, config and metrics: each imports its own floor and the base (errors, the package's
    version), and decide/ the records it decides on."""
    version = {"olive_eval", "olive_eval.__version__"}
    allowed = {
        "records": ("olive_eval.errors", "olive_eval.records"),
        "decide": ("olive_eval.errors", "olive_eval.records", "olive_eval.decide"),
    }
    offending = {
        str(path.relative_to(ROOT)): sorted(
            name for name in imports_of(path) if name not in version and not name.startswith(allowed[floor])
        )
        for floor in allowed
        for path in sorted((ROOT / floor).glob("*.py"))
    }
    assert {path: names for path, names in offending.items() if names} == {}


def test_function_metrics_do_not_import_the_registration_module_back():
    assert "olive_eval.metrics.function_metric" in imports_of(ROOT / "metrics" / "registry.py")
    assert not imports_of(ROOT / "metrics" / "function_metric.py") & {
        "olive_eval.metrics.registry",
        "olive_eval.metrics.registry.get_metric",
    }


def test_config_imports_nothing_of_the_engine():
    offending = {
        str(path.relative_to(ROOT)): sorted(name for name in imports_of(path) if name.startswith("olive_eval.engine"))
        for path in sorted((ROOT / "config").glob("*.py"))
    }
    assert {path: names for path, names in offending.items() if names} == {}


def test_runtimes_do_not_import_lm_eval_and_metrics_import_neither():
    """The harness adapts the runtimes (lm_eval/serving.py); metrics know neither the runtimes nor lm-eval."""
    offending = {
        str(path.relative_to(ROOT)): sorted(name for name in imports_of(path) if name.startswith(banned))
        for folder, banned in (
            ("runtimes", ("olive_eval.lm_eval",)),
            ("metrics", ("olive_eval.lm_eval", "olive_eval.runtimes")),
        )
        for path in sorted((ROOT / folder).rglob("*.py"))
    }
    assert {path: names for path, names in offending.items() if names} == {}
