"""Runtimes: one small interface (prepare on a device, run a batch, describe inputs), one module each."""

from olive_eval.runtimes.base import BoundCall, InputSpec, Runtime, create_runtime, runtime_registry

__all__ = ["BoundCall", "InputSpec", "Runtime", "create_runtime", "runtime_registry"]
