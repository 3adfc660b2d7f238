import compileall
import itertools
import os
import sys
from pathlib import Path

import pytest

from tests.helpers import ToyProblem
from tests.xdist_groups import costliest_first, file_scheduler, unit_costs

# The suite starts many fresh interpreters (the CLI's subprocesses, fork servers, the process executor's children,
# the registry check): where PYTHONDONTWRITEBYTECODE is set, each compiled the whole package from source again.
# The bytecode caches go to __pycache__ folders, which git ignores.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# ranx, the retrieval tests' reference, runs as the Python it is written in: numba compiled its metric functions
# once per fresh environment (15-20 s, one worker's share of the suite), while its 51 cases run in 3 s interpreted
# and give the same values. Set before any module imports numba; ranx is its only user here.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")

PACKAGE = Path(__file__).resolve().parents[1] / "olive_eval"


def pytest_configure(config: pytest.Config) -> None:
    """The package compiled once, before any worker starts (on xdist's controller, or the serial run): in a fresh
    checkout each worker, Ray worker, fork server and subprocess otherwise compiled its modules again, the first
    ones at the same time."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(PACKAGE, quiet=1)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent without it
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile`` by file, with the files of :data:`tests.xdist_groups.SHARED_UNITS` in shared units."""
    if config.getoption("dist") == "loadfile":
        return file_scheduler(config, log)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker under ``--dist loadfile``, the tests in the order their units are handed out: the
    costliest first (:func:`tests.xdist_groups.costliest_first`); a serial run keeps pytest's order."""
    if not hasattr(config, "workerinput") or config.getoption("dist") != "loadfile":
        return
    by_id = {item.nodeid: item for item in items}
    items[:] = [by_id[nodeid] for nodeid in costliest_first(list(by_id), unit_costs())]


@pytest.fixture
def toy(tmp_path):
    return ToyProblem(tmp_path)


@pytest.fixture(scope="session")
def _result_caches(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("caches")


_cache_numbers = itertools.count()


@pytest.fixture(autouse=True)
def _own_result_cache(_result_caches, monkeypatch):
    """Each test has its own result cache folder (the CLI caches by default): no test sees another's entries,
    and none writes to the user's cache. A fresh name, made by the cache when it first writes (a ``mktemp`` per
    test scanned the ever-growing base folder each time)."""
    monkeypatch.setenv("OLIVE_EVAL_CACHE_DIR", str(_result_caches / f"cache{next(_cache_numbers)}"))
