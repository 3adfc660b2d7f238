"""How the README's ``-n 2 --dist loadfile`` splits the suite between pytest-xdist workers: whole files (a module's
``scope="module"`` fixtures are built once, on the worker that runs it), files that must not run beside each other
put in one unit, run one after another on one worker, and the costliest units handed out first.

A scheduler rather than ``xdist_group`` marks: pytest-xdist 3.8.0 groups marked tests by rewriting ``item._nodeid``,
which pytest 9.2 no longer reads (a node's id is ``item._id``), so under pytest 9.2 ``--dist loadgroup`` ignores
every mark and sends each test anywhere, as ``--dist load``.

Costliest first: xdist's own order puts the files with the most tests first, so the heavy files with a few tests
(a model built, a Ray started, a JIT compiled) came last and one worker ran them alone while the other sat idle.
Handing out the units by their measured seconds (:data:`COSTS_FILE`, written by ``python -m tests.xdist_groups
JUNIT_XML`` from a run's ``--junitxml``) is the longest-first rule, which leaves at most about one unit's time
between the workers' ends. A unit the table does not know is taken as :data:`UNKNOWN_SECONDS`; a stale table only
changes the order, never which tests run."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path
from typing import Any

#: Files whose tests share one unit of work.
#: ``local_ray``: each starts a local Ray (two CPUs, an object store in /dev/shm, the fixture ``local_ray`` or a run
#: of its own): one at a time on the machine, and their timeout and worker-death tests never race a second Ray's
#: workers for the two cores.
#: ``quantization_sweep``: both read the run's one MiniLM export and int8 copies (``tests/examples/conftest.py``, a
#: shared build of 30-40 s): handed out first, as the two costliest files, on two workers, one sat waiting on the
#: other's build; on one worker the second file starts with the build done.
SHARED_UNITS = {
    "tests/examples/test_quantization_sweep.py": "quantization_sweep",
    "tests/examples/test_quantization_sweep_sequential.py": "quantization_sweep",
    "tests/engine/executors/test_ray_executor.py": "local_ray",
    "tests/engine/executors/test_ray_shards.py": "local_ray",
}

REPO = Path(__file__).resolve().parents[1]
#: Each unit's seconds in a measured ``-n 2`` run (setup and teardown included), for the order units are handed out.
COSTS_FILE = Path(__file__).with_name("xdist_costs.json")
#: The table lists the units of at least this many seconds; one it does not list is taken as :data:`UNKNOWN_SECONDS`.
LISTED_SECONDS = 1.0
UNKNOWN_SECONDS = 0.5


def unit_of(nodeid: str) -> str:
    """The unit of work a test is scheduled in: its group in :data:`SHARED_UNITS`, else its file."""
    path = nodeid.split("::", 1)[0]
    return SHARED_UNITS.get(path, path)


def unit_costs(path: Path = COSTS_FILE) -> dict[str, float]:
    """The table of measured seconds per unit; empty where there is none."""
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def costliest_first(nodeids: list[str], costs: dict[str, float]) -> list[str]:
    """The node ids with their units in descending measured cost (ties by name), each unit's tests in their order."""
    order = {nodeid: i for i, nodeid in enumerate(nodeids)}

    def key(nodeid: str) -> tuple[float, str, int]:
        unit = unit_of(nodeid)
        return -costs.get(unit, UNKNOWN_SECONDS), unit, order[nodeid]

    return sorted(nodeids, key=key)


def test_file(classname: str, root: Path) -> str:
    """The file a junit test case's ``classname`` (``tests.pkg.test_mod`` or ``tests.pkg.test_mod.Class``) is in."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        path = "/".join(parts[:end]) + ".py"
        if (root / path).is_file():
            return path
    return "/".join(parts) + ".py"


def costs_from_junit(junit_xml: Path, root: Path = REPO) -> dict[str, float]:
    """Seconds per unit from a pytest ``--junitxml`` report (the test cases' times, setup and teardown included)."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ElementTree.parse(junit_xml).getroot().iter("testcase"):
        seconds[unit_of(test_file(case.get("classname", ""), root))] += float(case.get("time") or 0.0)
    return {unit: round(s, 1) for unit, s in sorted(seconds.items()) if s >= LISTED_SECONDS}


def file_scheduler(config: Any, log: Any) -> Any:
    """pytest-xdist's ``loadfile`` scheduler with :func:`unit_of` as its unit, the units in the workers' collection
    order (``--no-loadscope-reorder``: the order :func:`costliest_first` gave them) (xdist imported only when it
    runs)."""
    from xdist.scheduler import LoadFileScheduling

    class FilesAndGroups(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:  # the override point xdist's scope schedulers document
            return unit_of(nodeid)

    config.option.loadscopereorder = False
    return FilesAndGroups(config, log)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m tests.xdist_groups JUNIT_XML  (writes tests/xdist_costs.json)")
    COSTS_FILE.write_text(json.dumps(costs_from_junit(Path(sys.argv[1])), indent=0) + "\n", encoding="utf-8")
