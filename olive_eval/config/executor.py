"""Executor settings: the ``executor`` key of a run config, validated by the model its ``type`` registered.

Settings are data: this module says which keys each executor type takes and checks them; it builds nothing. The
engine turns settings into an executor (:func:`olive_eval.engine.executors.base.build_executor`, one builder per
type registered in ``olive_eval.engine.executors``), so the config never imports the engine.

A new executor type registers its settings class (an :class:`ExecutorConfig` subclass with
``type: Literal["<name>"]``) with ``executor_registry.decorator("<name>")``, and its builder with
``executor_builders.decorator("<name>")``. ``timeout_s`` is every executor's key; ``local`` refuses it (it cannot
stop the interpreter it runs in).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer, model_validator

from olive_eval.config.components import nested_error
from olive_eval.registry import Registry
from olive_eval.registry_spec import SpecForm
from olive_eval.strict_model import StrictModel


class ExecutorConfig(StrictModel):
    """The keys every executor type takes; a registered subclass adds its own and a ``type`` literal."""

    type: str
    timeout_s: float | None = Field(
        None,
        gt=0,
        description="Seconds one model may take before its process or worker is ended and the model recorded as "
        "failed (process and ray only).",
    )
    shards: int = Field(
        1,
        ge=1,
        description="Each prediction pass of a model split into this many contiguous ranges of its data, scored "
        "apart (in as many child processes with 'process', Ray tasks with 'ray') and merged: the values are those of "
        "one pass.",
    )

    @model_serializer(mode="wrap")
    def _with_type(self, handler: SerializerFunctionWrapHandler) -> Any:
        """The type always written, even where it is the class's default: a dump without it (results.json's
        recorded config is dumped with ``exclude_defaults``) would read back as the ``local`` executor."""
        data = handler(self)
        return {"type": self.type, **data} if isinstance(data, dict) else data


DEFAULT_EXECUTOR = "local"


def _settings(entry: type[ExecutorConfig], settings: ExecutorConfig) -> ExecutorConfig:
    """The settings validated by their type's class are the object: config builds no engine object."""
    return settings


#: Executor types: the settings class each registers (built-in ones in this module). A spec is ``"process"``
#: (a bare name) or ``{"type": "process", ...}``, validated into the registered class; pydantic's own errors go up
#: (the run config and the session locate them).
executor_registry: Registry[type[ExecutorConfig]] = Registry(
    "executor type",
    packages=("olive_eval.config.executor",),
    group="olive_eval.executors",
    base=ExecutorConfig,
    form=SpecForm(
        built=ExecutorConfig,
        names=True,
        params=False,
        default=DEFAULT_EXECUTOR,
        not_object="an executor is a type name or an object with a 'type', not {type}",
        not_text="unknown {kind} {got}; executor types: {names}",
        unknown="unknown {kind} '{name}'; executor types: {names}",
        make=_settings,
        explain=None,
    ),
)


def executor_config(value: Any) -> ExecutorConfig:
    """``"process"``, ``{"type": "process", ...}`` or a config, validated by its registered type's model
    (:class:`SpecError` ``type: unknown executor type ...`` for a type not registered)."""
    return executor_registry.build(value)  # type: ignore[no-any-return]


@executor_registry.decorator("local")
class LocalConfig(ExecutorConfig):
    """In this process, one model after another (the default)."""

    type: Literal["local"] = "local"

    @model_validator(mode="after")
    def _no_timeout(self) -> LocalConfig:
        if self.timeout_s is not None:
            raise nested_error(
                "timeout_s",
                "the local executor cannot stop a model that hangs; use the 'process' or 'ray' executor for a timeout",
            )
        return self


@executor_registry.decorator("process")
class ProcessConfig(ExecutorConfig):
    """Each model in a fresh child process: its crash, ``os._exit`` or out-of-memory kill fails only that model."""

    type: Literal["process"] = "process"


class ResourcesPerModel(StrictModel):
    """What one model's task reserves on a Ray node."""

    num_cpus: float = Field(1, ge=0, description="CPUs one model's task reserves.")
    num_gpus: float = Field(0, ge=0, description="GPUs one model's task reserves (a fraction shares a GPU).")
    memory: int | None = Field(None, gt=0, description="Bytes of memory one model's task reserves.")


@executor_registry.decorator("ray")
class RayConfig(ExecutorConfig):
    """Models spread over Ray workers (``pip install 'olive-eval[ray]'``): this machine or a cluster."""

    type: Literal["ray"] = "ray"
    address: str = Field(
        "local",
        description="'local' (start Ray here with num_workers CPUs), 'auto' (the running cluster: RAY_ADDRESS or "
        "the one started on this machine), 'ray://host:port' (Ray Client) or 'host:port' (a head node).",
    )
    num_workers: int | None = Field(
        None, gt=0, description="Models evaluated at a time (default: this machine's CPUs for 'local', else all)."
    )
    resources_per_model: ResourcesPerModel = Field(default_factory=ResourcesPerModel)
    runtime_env: dict[str, Any] | None = Field(
        None,
        description="Ray runtime_env of the workers (working_dir, py_modules, pip...); default on a cluster: the "
        "config's folder as working_dir, so its user scripts travel.",
    )
    connect_timeout_s: float = Field(5, gt=0, description="Seconds to wait for a cluster's address to answer.")

    @field_validator("address")
    @classmethod
    def _address(cls, v: str) -> str:
        if v in ("local", "auto") or v.startswith("ray://") or v.rpartition(":")[2].isdigit():
            return v
        raise ValueError(f"address is 'local', 'auto', 'ray://host:port' or 'host:port', not {v!r}")
