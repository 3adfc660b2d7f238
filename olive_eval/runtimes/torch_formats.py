"""The files a ``PyTorchModel`` loads from: a ``torch.export`` archive or a TorchScript file, told apart by
their contents, and how each one's module must be called.

Its own concept: reading a file format (and the positional/keyword split an exported program fixes) is
apart from feeding batches to the module, which ``runtimes/torch.py`` does the same for every format and for
a ``model_loader``'s module.
"""

from __future__ import annotations

import inspect
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.errors import EvaluationError, first_line
from olive_eval.lazy import LazyModule
from olive_eval.runtimes.base import InputSpec

torch = LazyModule("torch")


def _numpy_dtype(dtype: torch.dtype) -> np.dtype:
    """The numpy dtype data should have for a torch dtype (bfloat16, which numpy lacks, comes as float32)."""
    if dtype == torch.bfloat16:
        return np.dtype("float32")
    return torch.empty(0, dtype=dtype).numpy().dtype


def _is_export_archive(path: Path) -> bool:
    """``torch.export.save`` writes a zip with an ``archive_format`` record; TorchScript zips have none."""
    if path.suffix == ".pt2":
        return True
    try:
        with zipfile.ZipFile(path) as archive:
            return any(n == "archive_format" or n.endswith("/archive_format") for n in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return False


class CallPlan:
    """How to pass named tensors to the module.

    Default: one input positionally, several as keywords. A ``torch.export`` module only accepts the
    exact positional/keyword split it was exported with, so that split is read from its input spec.
    """

    def __init__(
        self,
        positional: list[str] | None = None,
        keywords: list[str] | None = None,
        specs: list[InputSpec] | None = None,
    ) -> None:
        self.positional = positional
        self.keywords = keywords
        #: The inputs' names, dtypes and shapes where the file records them (``torch.export`` does).
        self.specs = specs or []

    @classmethod
    def for_export(cls, program: Any, module: torch.nn.Module) -> CallPlan:
        in_spec = program.call_spec.in_spec
        children = in_spec.children() if hasattr(in_spec, "children") else in_spec.children_specs
        args_spec, kwargs_spec = children
        params = list(inspect.signature(module.forward).parameters)
        positional, keywords = params[: args_spec.num_children], list(kwargs_spec.context or [])
        values = {n.name: n.meta.get("val") for n in program.graph.nodes if n.op == "placeholder"}
        specs = []
        for name, placeholder in zip(positional + keywords, program.graph_signature.user_inputs, strict=False):
            val = values.get(placeholder)
            if isinstance(val, torch.Tensor):
                shape = tuple(d if isinstance(d, int) else str(d) for d in val.shape)
                specs.append(InputSpec(name, _numpy_dtype(val.dtype), shape))
        return cls(positional, keywords, specs if len(specs) == len(positional) + len(keywords) else None)

    def names(self) -> list[str]:
        """The inputs the module requires; empty when any set of names will do."""
        return [*(self.positional or []), *(self.keywords or [])]

    def __call__(self, module: Callable[..., Any], tensors: dict[str, torch.Tensor]) -> Any:
        if self.positional is None:
            if len(tensors) == 1:
                return module(next(iter(tensors.values())))
            return module(**tensors)
        args = [tensors[n] for n in self.positional]
        return module(*args, **{n: tensors[n] for n in (self.keywords or []) if n in tensors})


def _load_export(path: Path, device: torch.device) -> tuple[torch.nn.Module, CallPlan]:
    try:
        with path.open("rb") as stream:  # a buffer: torch.export.load takes only paths ending in ".pt2"
            program = torch.export.load(stream)
        if device.type != "cpu":
            from torch.export.passes import move_to_device_pass

            program = move_to_device_pass(program, device)
        module = program.module()
    except Exception as exc:
        raise EvaluationError(f"torch.export.load cannot read {path}: {first_line(exc)}") from exc
    return module, CallPlan.for_export(program, module)


def _load_torchscript(path: Path, device: torch.device) -> torch.nn.Module:
    try:
        with warnings.catch_warnings():  # TorchScript is deprecated, but it is what the user gave
            warnings.simplefilter("ignore", DeprecationWarning)
            return torch.jit.load(str(path), map_location=device)
    except Exception as exc:
        raise EvaluationError(
            f"{path} is not a TorchScript or torch.export file ({first_line(exc)}); "
            "for a pickled module or a state_dict, use model_loader"
        ) from exc


def load_file(path: Path, device: torch.device) -> tuple[torch.nn.Module, CallPlan | None, str]:
    """The module in ``path``, how to call it (``None``: the default plan) and its format's name."""
    if not path.is_file():
        raise EvaluationError(f"model file {path} does not exist")
    if _is_export_archive(path):
        module, plan = _load_export(path, device)
        return module, plan, "torch.export"
    return _load_torchscript(path, device), None, "torchscript"
