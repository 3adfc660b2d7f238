"""Runtimes: one small interface (load on a device, call a batch, describe), one module per model type."""

from olive_eval.runtimes.base import BoundCall, InputSpec, ModelConfig, Runtime, create_runtime, runtime_registry

__all__ = ["BoundCall", "InputSpec", "ModelConfig", "Runtime", "create_runtime", "runtime_registry"]
