"""The README's ``-n 2 --dist loadfile``: whole files per worker, the local-Ray files in one unit, and every file
that starts a local Ray listed there (a new one left out would run beside the other on the second worker)."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import conftest
from tests.xdist_groups import SHARED_UNITS, unit_of

REPO = Path(__file__).resolve().parents[1]

#: A test module starts a local Ray: it takes the ``local_ray`` fixture or configures the executor at "local".
STARTS_RAY = re.compile(r"def test_\w+\([^)]*\blocal_ray\b|\"type\": \"ray\", \"address\": \"local\"")


def test_a_test_is_scheduled_with_its_file_and_the_ray_files_share_one_unit() -> None:
    assert unit_of("tests/metrics/test_stats.py::test_x[a::b-1]") == "tests/metrics/test_stats.py"
    assert unit_of("tests/report/test_browser.py::Suite::test_y") == "tests/report/test_browser.py"
    ray = {unit_of(f"{path}::test_z") for path in SHARED_UNITS}
    assert ray == {"local_ray"}


def test_every_file_that_starts_a_local_ray_is_in_the_ray_unit() -> None:
    starting = {
        path.relative_to(REPO).as_posix()
        for path in (REPO / "tests").rglob("test_*.py")
        if STARTS_RAY.search(path.read_text(encoding="utf-8"))
    }
    assert "tests/engine/executors/test_ray_executor.py" in starting  # the pattern sees the known one
    assert {path for path, unit in SHARED_UNITS.items() if unit == "local_ray"} == starting


@pytest.mark.parametrize("dist", ["load", "loadgroup", "loadscope", "worksteal", "no"])
def test_only_loadfile_gets_the_scheduler(dist: str) -> None:
    config = SimpleNamespace(getoption=lambda name: dist)
    assert conftest.pytest_xdist_make_scheduler(config=config, log=None) is None


class FakeWorker:
    """What xdist's scheduler calls on a worker: the indices of the tests sent to it."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def test_loadfile_sends_each_file_whole_and_both_ray_files_to_one_worker(pytestconfig, monkeypatch) -> None:
    monkeypatch.setattr(pytestconfig.option, "dist", "loadfile")
    monkeypatch.setattr(pytestconfig.option, "tx", ["2*popen"])
    scheduler = conftest.pytest_xdist_make_scheduler(config=pytestconfig, log=None)
    ray_files = sorted(SHARED_UNITS)
    collection = [
        f"{path}::test_{i}"
        for i in range(3)
        for path in [ray_files[0], *(f"tests/t{n}.py" for n in range(6)), ray_files[1]]
    ]
    workers = [FakeWorker("gw0"), FakeWorker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    while scheduler.has_pending:  # each worker finishes what it was sent, as xdist reports it
        for worker in workers:
            for index in list(worker.sent):
                scheduler.mark_test_complete(worker, index)
    files = [{collection[i].split("::")[0] for i in worker.sent} for worker in workers]
    assert sorted(i for worker in workers for i in worker.sent) == list(range(len(collection)))  # each test once
    assert not files[0] & files[1]  # no file split between the workers
    assert any(set(ray_files) <= sent for sent in files)  # both Ray files on one worker
