"""How the README's ``-n 2 --dist loadfile`` splits the suite between pytest-xdist workers: whole files (a module's
``scope="module"`` fixtures are built once, on the worker that runs it), and files that must not run beside each
other put in one unit, run one after another on one worker.

A scheduler rather than ``xdist_group`` marks: pytest-xdist 3.8.0 groups marked tests by rewriting ``item._nodeid``,
which pytest 9.2 no longer reads (a node's id is ``item._id``), so under pytest 9.2 ``--dist loadgroup`` ignores
every mark and sends each test anywhere, as ``--dist load``."""

from __future__ import annotations

from typing import Any

#: Files whose tests share one unit of work. ``local_ray``: each starts a local Ray (two CPUs, an object store in
#: /dev/shm, the fixture ``local_ray`` or a run of its own): one at a time on the machine, and their timeout and
#: worker-death tests never race a second Ray's workers for the two cores.
SHARED_UNITS = {
    "tests/engine/executors/test_ray_executor.py": "local_ray",
    "tests/engine/executors/test_ray_shards.py": "local_ray",
}


def unit_of(nodeid: str) -> str:
    """The unit of work a test is scheduled in: its group in :data:`SHARED_UNITS`, else its file."""
    path = nodeid.split("::", 1)[0]
    return SHARED_UNITS.get(path, path)


def file_scheduler(config: Any, log: Any) -> Any:
    """pytest-xdist's ``loadfile`` scheduler with :func:`unit_of` as its unit (xdist imported only when it runs)."""
    from xdist.scheduler import LoadFileScheduling

    class FilesAndGroups(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:  # the override point xdist's scope schedulers document
            return unit_of(nodeid)

    return FilesAndGroups(config, log)
