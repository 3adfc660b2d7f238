"""The README's ``-n 2 --dist loadfile``: whole files per worker, the local-Ray files in one unit, and every file
that starts a local Ray listed there (a new one left out would run beside the other on the second worker)."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import conftest
from tests.xdist_groups import (
    COSTS_FILE,
    SHARED_UNITS,
    UNKNOWN_SECONDS,
    costliest_first,
    costs_from_junit,
    unit_costs,
    unit_of,
)

REPO = Path(__file__).resolve().parents[1]

RAY_FILES = [path for path, unit in SHARED_UNITS.items() if unit == "local_ray"]
#: A test module starts a local Ray: it takes the ``local_ray`` fixture or configures the executor at "local".
STARTS_RAY = re.compile(r"def test_\w+\([^)]*\blocal_ray\b|\"type\": \"ray\", \"address\": \"local\"")


def test_a_test_is_scheduled_with_its_file_and_the_ray_files_share_one_unit() -> None:
    assert unit_of("tests/metrics/test_stats.py::test_x[a::b-1]") == "tests/metrics/test_stats.py"
    assert unit_of("tests/report/test_browser.py::Suite::test_y") == "tests/report/test_browser.py"
    ray = {unit_of(f"{path}::test_z") for path in RAY_FILES}
    assert ray == {"local_ray"}
    assert unit_of("tests/examples/test_quantization_sweep.py::test_a") == unit_of(
        "tests/examples/test_quantization_sweep_sequential.py::t"
    )


def test_every_file_that_starts_a_local_ray_is_in_the_ray_unit() -> None:
    starting = {
        path.relative_to(REPO).as_posix()
        for path in (REPO / "tests").rglob("test_*.py")
        if STARTS_RAY.search(path.read_text(encoding="utf-8"))
    }
    assert "tests/engine/executors/test_ray_executor.py" in starting  # the pattern sees the known one
    assert set(RAY_FILES) == starting


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
    monkeypatch.setattr(pytestconfig.option, "loadscopereorder", True, raising=False)  # set back after the test
    scheduler = conftest.pytest_xdist_make_scheduler(config=pytestconfig, log=None)
    ray_files = sorted(RAY_FILES)
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


def test_loadfile_hands_out_the_units_in_the_collections_order_not_by_their_number_of_tests(
    pytestconfig, monkeypatch
) -> None:
    monkeypatch.setattr(pytestconfig.option, "dist", "loadfile")
    monkeypatch.setattr(pytestconfig.option, "tx", ["2*popen"])
    monkeypatch.setattr(pytestconfig.option, "loadscopereorder", True, raising=False)
    scheduler = conftest.pytest_xdist_make_scheduler(config=pytestconfig, log=None)
    collection = ["tests/heavy.py::one", "tests/second.py::one", *(f"tests/many.py::t{i}" for i in range(9))]
    workers = [FakeWorker("gw0"), FakeWorker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    assert [collection[worker.sent[0]] for worker in workers] == ["tests/heavy.py::one", "tests/second.py::one"]


def test_units_are_handed_out_costliest_first_each_with_its_tests_in_order() -> None:
    ray_a, ray_b = sorted(RAY_FILES)
    nodeids = ["tests/a.py::t1", f"{ray_a}::r1", "tests/b.py::t1", "tests/a.py::t2", f"{ray_b}::r2", "tests/c.py::t"]
    costs = {"tests/b.py": 30.0, "local_ray": 20.0, "tests/c.py": UNKNOWN_SECONDS + 0.1}
    assert costliest_first(nodeids, costs) == [
        "tests/b.py::t1",
        f"{ray_a}::r1",
        f"{ray_b}::r2",
        "tests/c.py::t",
        "tests/a.py::t1",  # not in the table: UNKNOWN_SECONDS
        "tests/a.py::t2",
    ]
    assert costliest_first(nodeids, {}) == sorted(nodeids, key=lambda n: (unit_of(n), nodeids.index(n)))


def test_the_costs_are_read_from_a_junit_report_per_unit(tmp_path: Path) -> None:
    ray_a, ray_b = (Path(p).with_suffix("").as_posix().replace("/", ".") for p in sorted(RAY_FILES))
    junit = tmp_path / "junit.xml"
    junit.write_text(
        "<testsuites><testsuite>"
        '<testcase classname="tests.test_xdist_groups" name="a" time="0.7"/>'
        '<testcase classname="tests.test_xdist_groups" name="b" time="0.6"/>'
        '<testcase classname="tests.report.test_browser.Suite" name="c" time="3.0"/>'  # a class in the file
        f'<testcase classname="{ray_a}" name="d" time="2.0"/><testcase classname="{ray_b}" name="e" time="1.5"/>'
        '<testcase classname="tests.test_cli" name="f" time="0.2"/>'  # under LISTED_SECONDS: left out
        "</testsuite></testsuites>"
    )
    assert costs_from_junit(junit, REPO) == {
        "local_ray": 3.5,
        "tests/report/test_browser.py": 3.0,
        "tests/test_xdist_groups.py": 1.3,
    }


def test_the_committed_table_names_units_that_exist() -> None:
    costs = unit_costs()
    assert COSTS_FILE.exists() and len(costs) > 20
    groups = set(SHARED_UNITS.values())
    assert [unit for unit in costs if unit not in groups and not (REPO / unit).is_file()] == []


def test_a_worker_orders_its_collection_and_a_serial_run_keeps_pytests_order(monkeypatch) -> None:
    items = [SimpleNamespace(nodeid=n) for n in ("tests/z.py::a", "tests/engine/test_peak_memory.py::b")]
    serial = SimpleNamespace(getoption=lambda name: "loadfile")
    kept = list(items)
    conftest.pytest_collection_modifyitems(serial, kept)
    assert kept == items
    worker = SimpleNamespace(getoption=lambda name: "loadfile", workerinput={})
    monkeypatch.setattr(conftest, "unit_costs", lambda: {"tests/engine/test_peak_memory.py": 40.0})
    ordered = list(items)
    conftest.pytest_collection_modifyitems(worker, ordered)
    assert ordered == items[::-1]
