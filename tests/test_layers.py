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


#: The floors of the house, lowest first (docs/architecture.md): a module imports only from its own floor or
#: the floors below it. A module belongs to the floor of its longest matching prefix.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "base",
        (
            "olive_eval.errors",
            "olive_eval.cores",
            "olive_eval.strict_model",
            "olive_eval.lazy",
            "olive_eval.registry",
            "olive_eval.registry_spec",
            "olive_eval.registry_function",
            "olive_eval.registry_index",
            "olive_eval.registry_build",
            "olive_eval.progress",
            "olive_eval.interrupt",
            "olive_eval.user_module",
            "olive_eval.huggingface_env",
            "olive_eval.transforms",
        ),
    ),
    ("records and decisions", ("olive_eval.records", "olive_eval.decide")),
    # The judge protocol and its sources' registry (judges/base.py, function.py) are what a metric calls: they sit
    # with the metrics; a model judge (judges/model.py) needs the runtimes, a floor up.
    ("metrics", ("olive_eval.metrics", "olive_eval.judges.base", "olive_eval.judges.function")),
    (
        "declarations",
        ("olive_eval.tasks", "olive_eval.data", "olive_eval.runtimes", "olive_eval.judges", "olive_eval.lm_eval"),
    ),
    ("config", ("olive_eval.config",)),
    ("engine", ("olive_eval.engine", "olive_eval.lm_eval_run")),
    (
        "faces",
        (
            "olive_eval.cli",
            "olive_eval.api",
            "olive_eval.olive",
            "olive_eval.report",
            "olive_eval.testing",
            "olive_eval.__main__",
        ),
    ),
)
#: Imports that still run up a floor, each with the reason it is allowed; the issue allows at most one.
KNOWN_UPWARD: dict[tuple[str, str], str] = {
    (
        "olive_eval.engine.session.session",
        "olive_eval.report.html",
    ): "Evaluation.report() writes the page from the session's "
    "own results (the page reads only records/ and decide/, so no circle)",
}


def floor_of(module: str) -> int | None:
    found = [
        (len(prefix), i)
        for i, (_, prefixes) in enumerate(FLOORS)
        for prefix in prefixes
        if module == prefix or module.startswith(prefix + ".")
    ]
    return max(found)[1] if found else None


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Each package module → the package modules it imports, anywhere in it. ``from pkg import mod`` imports the
    module ``mod`` only; ``from pkg import name`` imports ``pkg`` (its ``__init__``)."""
    modules = {module_name(path): path for path in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
                targets = subs if len(subs) == len(node.names) else [node.module, *subs]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target.startswith("olive_eval.") and target != name:
                    found.add(target)
        graph[name] = found
    return graph


def test_every_module_has_a_floor():
    assert sorted(name for name in import_graph() if name != "olive_eval" and floor_of(name) is None) == []


def test_every_import_runs_down_the_floors():
    upward = {
        (name, imported): f"{FLOORS[floor_of(name)][0]} imports {FLOORS[floor_of(imported)][0]}"
        for name, imports in import_graph().items()
        if floor_of(name) is not None
        for imported in imports
        if floor_of(imported) is not None and floor_of(imported) > floor_of(name)
    }
    assert set(upward) == set(KNOWN_UPWARD), upward
    assert len(KNOWN_UPWARD) <= 1


def test_no_import_circles():
    """Tarjan's strongly connected components over every import, those inside functions and TYPE_CHECKING too."""
    graph = import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert circles == []


def test_no_module_is_over_350_lines():
    long = {module_name(p): n for p in ROOT.rglob("*.py") if (n := len(p.read_text().splitlines())) > 350}
    assert long == {}
