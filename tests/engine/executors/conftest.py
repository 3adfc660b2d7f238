"""The local Ray the ray executor's tests share: one for both Ray files (they run one after the other, in one unit
of work on one worker: ``tests/xdist_groups.py``), started by the first test that takes ``local_ray`` and ended
once the next test is in neither file. Starting a local Ray is seconds of CPU (its daemons and prestarted workers
are each an interpreter importing Ray), paid once rather than once per file."""

from __future__ import annotations

import importlib
import sys

import pytest

#: The files whose tests share the local Ray (kept running from one of their tests to the next).
RAY_FILES = frozenset({"test_ray_executor.py", "test_ray_shards.py"})

#: What a unit's or a shard's task imports on a worker (the toy's ONNX and the Python models' runtimes too).
WORKER_IMPORTS = (
    "olive_eval.engine.executors.ray_executor",
    "olive_eval.engine.executors.ray_shards",
    "olive_eval.engine.executors.worker",
    "olive_eval.engine.passes.shards",
    "olive_eval.runtimes.onnx",
    "olive_eval.runtimes.python",
    "pyarrow.compute",
    "pyarrow.parquet",
)


def imported(names: tuple[str, ...]) -> int:
    """``names`` imported in this process (a Ray worker): its process id."""
    import os

    for name in names:
        importlib.import_module(name)
    return os.getpid()


def end_local_ray() -> None:
    """The local Ray of this process ended, if one runs (the ``ray`` module is imported only where a test did)."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()


@pytest.fixture
def local_ray() -> None:
    """A local Ray running in this process (two CPUs, as CI runs it): the executor joins it and leaves it running.
    Its two prestarted workers import what the tasks import as it starts, so a test's first tasks (and the
    timeout tests' clocks) do not wait for a worker's imports; a worker started later, after one died, still does."""
    import ray  # the dev extras install it; missing, the tests fail rather than skip

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        warm = ray.remote(num_cpus=1)(imported)
        ray.get([warm.remote(WORKER_IMPORTS) for _ in range(2)])


@pytest.fixture
def no_local_ray() -> None:
    """No Ray running in this process: a run that starts its own (a fresh command line) shares the cores with none."""
    end_local_ray()


@pytest.hookimpl(trylast=True)  # after the test's own fixtures are torn down
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """The shared Ray ended once the tests of the Ray files are done (none runs next)."""
    if nextitem is None or nextitem.path.name not in RAY_FILES:
        end_local_ray()
