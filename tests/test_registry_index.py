"""A lookup of one built-in name imports the one module that registers it, found in the generated index; the
index is current; a name the index lacks or misplaces still resolves through the full import; a registration
of a built-in name elsewhere is the collision it always was."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import olive_eval.registry
from olive_eval import registry_build
from olive_eval.registry import RegistryError, indexed_module
from olive_eval.registry_index import MODULES


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_the_committed_index_is_what_the_registrations_say():
    completed = subprocess.run(
        [sys.executable, "-m", "olive_eval.registry_build", "--check"], capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr


def test_the_committed_index_is_the_generated_text():
    assert registry_build.render(MODULES) == registry_build.INDEX_FILE.read_text(encoding="utf-8")


def test_a_stale_index_names_the_command_and_the_change(monkeypatch, capsys):
    built = {kind: dict(names) for kind, names in MODULES.items()}
    built["metric"]["accuracy_score"] = "olive_eval.metrics.elsewhere"
    built["metric"]["new_metric"] = "olive_eval.metrics.new_family"
    monkeypatch.setattr(registry_build, "build", lambda: built)
    assert registry_build.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "registry_index.py is stale; run: python -m olive_eval.registry_build --write" in err
    assert "metric 'accuracy_score': olive_eval.metrics.classification.metrics -> olive_eval.metrics.elsewhere" in err
    assert "metric 'new_metric': (absent) -> olive_eval.metrics.new_family" in err


def test_check_and_write_are_required_and_exclusive(capsys):
    for argv in ([], ["--check", "--write"]):
        with pytest.raises(SystemExit) as exit_info:
            registry_build.main(argv)
        assert exit_info.value.code == 2
    assert "one of the arguments --write --check is required" in capsys.readouterr().err


def test_a_module_that_needs_a_missing_package_is_skipped_with_a_note(monkeypatch, capsys):
    imported = []

    def import_module(name: str) -> None:
        if name == "olive_eval.metrics.classification.metrics":
            raise ImportError("needs a package this environment lacks")
        imported.append(name)

    monkeypatch.setattr(registry_build, "import_module", import_module)
    registry_build._import_everything()
    err = capsys.readouterr().err
    assert "note: olive_eval.metrics.classification.metrics not imported: needs a package this environment lacks" in err
    assert "olive_eval.metrics.speech.error_rates" in imported
    assert "olive_eval.__main__" not in imported  # importing it would run the command line


# (owner module, registry expression, kind, name, a module of the same package that must stay unimported)
LOOKUPS = [
    ("olive_eval.metrics.base", "metric_registry", "metric", "accuracy_score", "olive_eval.metrics.speech.error_rates"),
    ("olive_eval.data.components", "registries['post-process']", "post-process type", "argmax", "olive_eval.data.vqa"),
    ("olive_eval.runtimes.base", "runtime_registry", "model type", "PythonModel", "olive_eval.runtimes.onnx"),
]


#: Run with the owner module and a JSON list of statements: after importing the owner, each statement runs in a
#: forked child (the interpreter as a fresh one is just after that import), which prints the modules it added.
_AFTER_OWNER = """
import json, os, sys
import {owner} as owner


def new_modules(statement):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            before = set(sys.modules)
            exec(statement, {{"owner": owner}})
            os.write(write, json.dumps(sorted(set(sys.modules) - before)).encode())
            status = 0
        except BaseException:
            sys.excepthook(*sys.exc_info())
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read) as pipe:
        added = pipe.read()
    assert os.waitpid(pid, 0)[1] == 0, statement
    return added


for statement in json.loads(sys.argv[1]):
    print(new_modules(statement))
"""


def _new_modules(owner: str, *statements: str) -> list[set[str]]:
    """The modules each statement imports in a fresh interpreter that has imported ``owner``: one interpreter,
    a forked child per statement, so the owner's import is paid once."""
    completed = subprocess.run(
        [sys.executable, "-c", _AFTER_OWNER.format(owner=owner), json.dumps(statements)],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()[-len(statements) :]
    return [set(json.loads(line)) for line in lines]


@pytest.mark.parametrize(("owner", "registry", "kind", "name", "sibling"), LOOKUPS)
def test_a_lookup_imports_the_registering_module_and_what_it_imports_only(owner, registry, kind, name, sibling):
    module = indexed_module(kind, name)
    looked_up, imported = _new_modules(
        owner, f"owner.{registry}.get({name!r})", f"import importlib; importlib.import_module({module!r})"
    )
    assert module in looked_up
    assert looked_up == imported
    assert sibling not in looked_up


def test_listing_the_names_still_imports_every_module():
    completed = _python(
        "import sys\nfrom olive_eval.metrics.base import metric_registry\n"
        "print('wer' in metric_registry.names(), 'olive_eval.metrics.speech.error_rates' in sys.modules)"
    )
    assert completed.stdout.split() == ["True", "True"], completed.stderr


# ------------------------------------------------------------------------------ a package built in the test

_COUNTER = itertools.count()


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A fresh package ``pkgN``: ``a`` registers ``x`` by a call at its top level, ``b`` registers ``y`` through
    a helper; ``REGISTRY`` is its registry, whose index the test sets with ``index(...)``."""
    name = f"olive_eval_test_registry_pkg{next(_COUNTER)}"
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text(
        "from olive_eval.registry import Registry\n"
        f"REGISTRY = Registry('widget', packages=({name!r},))\n\n"
        "class Widget:\n    pass\n"
    )
    (root / "a.py").write_text(f"from {name} import REGISTRY, Widget\nREGISTRY.register('x', Widget)\n")
    (root / "b.py").write_text(
        f"from {name} import REGISTRY, Widget\n\ndef add(n):\n    REGISTRY.register(n, Widget)\n\nadd('y')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    entries: dict[str, str] = {}
    monkeypatch.setattr(
        olive_eval.registry, "indexed_module", lambda kind, n: entries.get(n) if kind == "widget" else None
    )
    pkg = __import__(name)
    yield name, pkg.REGISTRY, entries.update
    for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
        del sys.modules[module]


def test_an_indexed_name_imports_its_module_alone(package):
    name, registry, index = package
    index({"x": f"{name}.a", "y": f"{name}.b"})
    assert registry.get("y").__name__ == "Widget"
    assert f"{name}.b" in sys.modules and f"{name}.a" not in sys.modules
    assert "x" in registry and f"{name}.a" in sys.modules


def test_the_registering_module_is_recorded_for_a_decorator_call_and_a_helper(package):
    name, registry, _ = package
    assert registry.names() == ["x", "y"]
    assert registry.modules == {"x": f"{name}.a", "y": f"{name}.b"}


@pytest.mark.parametrize("wrong", ["{name}.a", "{name}.gone", None])
def test_a_name_the_index_misplaces_or_lacks_is_found_by_the_full_import(package, wrong):
    name, registry, index = package
    if wrong is not None:
        index({"y": wrong.format(name=name)})
    assert registry.get("y").__name__ == "Widget"
    assert f"{name}.b" in sys.modules


def test_an_unknown_name_still_lists_the_names(package):
    _, registry, _ = package
    with pytest.raises(RegistryError, match=r"unknown widget 'z'.*x, y"):
        registry.get("z")


def test_registering_a_built_in_name_elsewhere_names_both_places(package):
    name, registry, index = package
    index({"x": f"{name}.a"})
    with pytest.raises(
        RegistryError, match=rf"widget 'x' is registered twice: first in .*{name}.__init__\.py:Widget, again"
    ):
        registry.register("x", lambda: None)


def test_a_user_name_registers_and_registers_again_from_the_same_place(package):
    _, registry, _ = package

    def mine() -> None: ...

    assert registry.register("mine", mine, origin="script.py:mine") is mine
    assert registry.register("mine", mine, origin="script.py:mine") is mine
    assert registry.get("mine") is mine
    with pytest.raises(RegistryError, match=r"first in script\.py:mine, again in other\.py:mine"):
        registry.register("mine", mine, origin="other.py:mine")


def test_a_user_metric_named_like_a_built_in_one_is_refused_in_a_fresh_process():
    completed = _python(
        textwrap.dedent("""
            from olive_eval.metrics import Metric, register_metric
            class Mine(Metric):
                name = "accuracy_score"
                higher_is_better = True
            register_metric(Mine)
        """)
    )
    assert completed.returncode == 1
    assert "RegistryError: metric 'accuracy_score' is registered twice: first in " in completed.stderr
    assert str(Path("olive_eval", "metrics", "classification", "metrics.py")) in completed.stderr


def test_checking_a_config_s_built_in_sub_type_imports_no_other_metric_family():
    config = Path(__file__).resolve().parents[1] / "configs" / "quickstart.json"
    completed = _python(
        "import sys\nfrom olive_eval.config import load_run_config\n"
        f"load_run_config({str(config)!r})\n"
        "print(sorted(m for m in ('olive_eval.metrics.classification.metrics', 'olive_eval.metrics.speech.error_rates',"
        " 'olive_eval.metrics.detection.metrics') if m in sys.modules))"
    )
    assert completed.stdout.strip() == "['olive_eval.metrics.classification.metrics']", completed.stderr
