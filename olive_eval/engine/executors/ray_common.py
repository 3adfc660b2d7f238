"""What the ``ray`` executor's unit tasks and shard tasks share: how often the driver polls, how a worker names
itself in progress lines, the actor the workers send those lines to, and what a shard's driver needs of the
executor (:class:`RayHost`), so the shards (:mod:`.ray_shards`) do not import the executor that starts them.
Ray itself is imported only by :func:`import_ray`, when the executor is built: the ``ray`` extra is optional.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol

from olive_eval.engine.executors.node import node_info
from olive_eval.errors import MissingDependencyError

if TYPE_CHECKING:
    from olive_eval.config.run import RunConfig

#: How often the driver looks at finished tasks, progress lines and timeouts while tasks run.
POLL_S = 0.2


def worker_name() -> str:
    """This worker as progress lines name it: host, IP address and process id."""
    node = node_info()
    return f"{node['hostname']} ({node['ip']}, pid {os.getpid()})"


def import_ray() -> Any:
    """Ray, or the one-line error saying which extra to install."""
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray", "the 'ray' executor", "ray") from None
    return ray


class Reporter:
    """The actor workers send progress lines to; the driver drains it while it waits."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, str]] = []

    def put(self, node: str, model: str, message: str) -> None:
        self.lines.append((node, model, message))

    def drain(self) -> list[tuple[str, str, str]]:
        lines, self.lines = self.lines, []
        return lines


class RayHost(Protocol):
    """What a sharded pass's Ray tasks need of the executor that runs the model."""

    #: the ``ray`` module, connected
    ray: Any
    run_config: RunConfig
    #: what each task reserves (``resources_per_model``) and its retries
    task_options: dict[str, Any]

    def config_json(self) -> dict[str, Any]:
        """The run's config as JSON, for its user scripts."""
        ...

    def reporter(self) -> Any:
        """The progress actor the tasks send their lines to."""
        ...

    def shared(self) -> Any:
        """The run's opened data in the object store."""
        ...

    def report(self, started: dict[str, float], attempts: dict[str, int]) -> None:
        """Print the workers' progress lines; start a model's timeout clock when its task starts."""
        ...
