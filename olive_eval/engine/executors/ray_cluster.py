"""Joining Ray for the ``ray`` executor: start it here or connect to a cluster as the executor's ``address`` says,
fail in seconds when a cluster does not answer, and refuse a ``resources_per_model`` no node can give (Ray would
wait for it forever).
"""

from __future__ import annotations

import logging
import math
import os
import socket
from typing import TYPE_CHECKING, Any, Protocol

from olive_eval.errors import MissingDependencyError, UsageError, first_line

if TYPE_CHECKING:
    from olive_eval.config.run import RunConfig


class Resources(Protocol):
    """What one model's task reserves on a node (the executor's ``resources_per_model``)."""

    num_cpus: float
    num_gpus: float
    memory: int | None


class RaySettings(Protocol):
    """The ``ray`` executor's settings this module reads."""

    address: str
    num_workers: int | None
    resources_per_model: Resources
    runtime_env: dict[str, Any] | None
    connect_timeout_s: float


def connect(ray: Any, config: RaySettings, run: RunConfig) -> bool:
    """Start or join Ray as ``config.address`` says; True when this executor started it (and ends it)."""
    target = os.environ.get("RAY_ADDRESS") if config.address == "auto" else config.address
    if target and target.startswith("ray://"):  # Ray Client: its gRPC package is not in a plain 'pip install ray'
        try:
            import grpc  # noqa: F401
        except ImportError:
            raise MissingDependencyError(
                "ray[client]", f"the 'ray' executor at '{target}' (Ray Client)", "ray"
            ) from None
    if target and target != "local":
        _reachable(target, config.connect_timeout_s)
    if ray.is_initialized():
        return False  # the caller's Ray (a test's, a notebook's): used as it is
    common: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False, "include_dashboard": False}
    if config.address == "local":
        workers = config.num_workers or max(
            1, int((os.cpu_count() or 1) // max(config.resources_per_model.num_cpus, 1))
        )
        cpus = max(1, math.ceil(workers * max(config.resources_per_model.num_cpus, 1)))
        if config.runtime_env is not None:
            common["runtime_env"] = config.runtime_env
        ray.init(num_cpus=cpus, **common)
        return True
    env = config.runtime_env
    if env is None and run.source_dir is not None:  # the user scripts travel with the config's folder
        env = {"working_dir": str(run.source_dir)}
    try:
        ray.init(address=config.address, runtime_env=env, **common)
    except Exception as exc:  # ConnectionError, a runtime_env Ray refuses (a working_dir too big to upload)...
        raise UsageError(f"cannot connect to the Ray cluster at '{config.address}': {first_line(exc)}") from None
    return True


def _reachable(address: str, timeout_s: float) -> None:
    """Fail in seconds when nothing listens at a cluster's address (Ray's own client retries for a minute)."""
    text = address.removeprefix("ray://")
    host, _, port = text.rpartition(":")
    default = 10001 if address.startswith("ray://") else 6379
    host, port_number = (host, int(port)) if port.isdigit() else (text, default)
    try:
        socket.create_connection((host.strip("[]"), port_number), timeout=timeout_s).close()
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise UsageError(
            f"cannot reach the Ray cluster at '{address}' ({reason}, {timeout_s:g} s connect timeout): is it "
            "started ('ray start --head') and is the executor's address right?"
        ) from None


def check_resources(ray: Any, config: RaySettings) -> None:
    """Refuse before submitting when no node can ever run one model (Ray would wait for it forever)."""
    res = config.resources_per_model
    need = {"CPU": res.num_cpus, "GPU": res.num_gpus, "memory": res.memory or 0}
    need = {key: value for key, value in need.items() if value}
    nodes = [node.get("Resources", {}) for node in ray.nodes() if node.get("Alive")]
    if any(all(node.get(key, 0) >= value for key, value in need.items()) for node in nodes):
        return
    names = {"CPU": "num_cpus", "GPU": "num_gpus", "memory": "memory"}
    asked = ", ".join(f"{names[key]} {value:g}" for key, value in need.items())
    have = "; ".join(", ".join(f"{names[k]} {node.get(k, 0):g}" for k in need) for node in nodes) or "no live node"
    raise UsageError(
        f"no node of the Ray cluster can give one model {asked} (executor.resources_per_model); its nodes have: {have}"
    )
