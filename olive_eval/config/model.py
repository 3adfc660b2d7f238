"""Model configs: one per runtime, told apart by ``type``."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from olive_eval.strict_model import LaxPath, StrictModel

#: ``(provider name, provider options)``, normalised from every shape Olive accepts.
ProviderSpec = tuple[str, dict[str, Any]]

GRAPH_OPTIMIZATION_LEVELS = {
    "ORT_DISABLE_ALL": 0,
    "ORT_ENABLE_BASIC": 1,
    "ORT_ENABLE_EXTENDED": 2,
    "ORT_ENABLE_ALL": 99,
}
EXECUTION_MODES = {"ORT_SEQUENTIAL": 0, "ORT_PARALLEL": 1}


def normalize_providers(value: Any) -> list[ProviderSpec] | None:
    """Accept ``"Name"``, ``["Name", {opts}]`` and lists of either, as Olive and ONNX Runtime do."""
    if value is None:
        return None
    if isinstance(value, str):
        return [(value, {})]
    if (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], dict)
    ):
        return [(value[0], dict(value[1]))]
    if not isinstance(value, (list, tuple)):
        raise ValueError("execution providers must be a name, a [name, options] pair, or a list of those")
    out: list[ProviderSpec] = []
    for item in value:
        if isinstance(item, str):
            out.append((item, {}))
        elif (
            isinstance(item, (list, tuple))
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], dict)
        ):
            out.append((item[0], dict(item[1])))
        else:
            raise ValueError(f"bad execution provider {item!r}: use a name or a [name, options] pair")
    return out


class SessionOptions(StrictModel):
    intra_op_num_threads: int | None = Field(None, ge=0)
    inter_op_num_threads: int | None = Field(None, ge=0)
    graph_optimization_level: int | str | None = None
    execution_mode: int | str | None = None
    enable_profiling: bool = False
    log_severity_level: int | None = Field(None, ge=0, le=4)
    extra_session_config: dict[str, str] = Field(default_factory=dict)

    @field_validator("graph_optimization_level")
    @classmethod
    def _level(cls, v: int | str | None) -> int | None:
        if isinstance(v, str):
            if v not in GRAPH_OPTIMIZATION_LEVELS:
                raise ValueError(f"unknown level '{v}'; valid: {', '.join(GRAPH_OPTIMIZATION_LEVELS)}")
            return GRAPH_OPTIMIZATION_LEVELS[v]
        if v is not None and v not in GRAPH_OPTIMIZATION_LEVELS.values():
            raise ValueError("graph_optimization_level must be 0, 1, 2 or 99")
        return v

    @field_validator("execution_mode")
    @classmethod
    def _mode(cls, v: int | str | None) -> int | None:
        if isinstance(v, str):
            if v not in EXECUTION_MODES:
                raise ValueError(f"unknown execution mode '{v}'; valid: {', '.join(EXECUTION_MODES)}")
            return EXECUTION_MODES[v]
        if v is not None and v not in (0, 1):
            raise ValueError("execution_mode must be 0 (sequential) or 1 (parallel)")
        return v


class InferenceSettings(StrictModel):
    """ONNX Runtime session settings. ``execution_provider`` wins over the run's ``execution_providers``."""

    execution_provider: list[ProviderSpec] | None = None
    provider_options: list[dict[str, Any]] | None = None
    session_options: SessionOptions = Field(default_factory=SessionOptions)
    io_bind: bool = False

    @field_validator("execution_provider", mode="before")
    @classmethod
    def _providers(cls, v: Any) -> list[ProviderSpec] | None:
        return normalize_providers(v)

    @model_validator(mode="after")
    def _options_match(self) -> InferenceSettings:
        if self.provider_options is not None:
            if self.execution_provider is None or len(self.provider_options) != len(self.execution_provider):
                raise ValueError("provider_options needs one entry per execution_provider")
            self.execution_provider = [
                (name, {**opts, **extra})
                for (name, opts), extra in zip(self.execution_provider, self.provider_options, strict=True)
            ]
            self.provider_options = None
        return self

    def merged_with(self, override: InferenceSettings | None) -> InferenceSettings:
        """These settings with the keys ``override`` sets explicitly taking precedence (nothing is mutated)."""
        if override is None:
            return self
        data = self.model_dump()
        data.update(override.model_dump(exclude_unset=True))
        return InferenceSettings.model_validate(data)


class IOConfig(StrictModel):
    """Input names, shapes (batch dimension included) and types, for models whose files do not say."""

    input_names: list[str]
    input_shapes: list[list[int]] | None = None
    input_types: list[str] | None = None


def check_name(name: str) -> str:
    """Model and metric names show up in tables, progress lines and folder names: no control characters."""
    bad = next((ch for ch in name if unicodedata.category(ch).startswith("C")), None)
    if bad is not None:
        raise ValueError(f"name {name!r} contains the control character {bad!r}; use printable characters")
    if not name.strip():
        raise ValueError("name must not be empty or blank")
    return name


class _ModelBase(StrictModel):
    name: str | None = Field(None, description="Unique model name; defaults to the model file's stem.")

    def display_name(self) -> str:
        raise NotImplementedError

    def path_problem(self) -> tuple[str, str] | None:
        """``(key, what is wrong)`` when a path the model names is missing or of the wrong kind."""
        raise NotImplementedError


class ONNXModelConfig(_ModelBase):
    type: Literal["ONNXModel"]
    model_path: LaxPath = Field(description="An .onnx file, or a folder holding one (see onnx_file_name).")
    onnx_file_name: str | None = Field(None, description="The .onnx file inside a model_path folder (Olive's key).")
    inference_settings: InferenceSettings = Field(default_factory=InferenceSettings)

    def display_name(self) -> str:
        return self.name or self.model_path.stem

    @property
    def onnx_path(self) -> Path:
        """The .onnx file: model_path itself, or the file in the model_path folder."""
        if not self.model_path.is_dir():
            return self.model_path
        if self.onnx_file_name is not None:
            return self.model_path / self.onnx_file_name
        found = sorted(self.model_path.glob("*.onnx"))
        return found[0] if len(found) == 1 else self.model_path

    def path_problem(self) -> tuple[str, str] | None:
        path = self.model_path
        if not path.exists():
            return "model_path", f"file not found: {path}"
        if path.is_dir():
            if self.onnx_file_name is not None:
                if not (path / self.onnx_file_name).is_file():
                    return "onnx_file_name", f"{self.onnx_file_name} is not a file in {path}"
                return None
            found = sorted(p.name for p in path.glob("*.onnx"))
            if len(found) != 1:
                listed = f" ({', '.join(found[:5])})" if found else ""
                return "model_path", (
                    f"{path} is a directory with {len(found)} .onnx files{listed}; "
                    "name the model file, or the one to use with onnx_file_name"
                )
        elif self.onnx_file_name is not None:
            return "onnx_file_name", "onnx_file_name applies when model_path is a directory"
        return None

    def files(self) -> list[Path]:
        """The model file and the external-data files its initializers point at."""
        model_file = self.onnx_path
        with open(model_file, "rb") as handle:
            if b"location" not in handle.read():  # no external-data entry can exist: skip parsing the graph
                return [model_file]
        import onnx

        proto = onnx.load(str(model_file), load_external_data=False)
        locations: set[str] = set()
        graphs = [proto.graph]
        while graphs:
            graph = graphs.pop()
            for tensor in graph.initializer:
                locations.update(e.value for e in tensor.external_data if e.key == "location")
            for node in graph.node:
                for attr in node.attribute:
                    graphs.extend([attr.g] if attr.HasField("g") else [])
                    graphs.extend(attr.graphs)
        return [model_file, *(model_file.parent / loc for loc in sorted(locations))]


class PyTorchModelConfig(_ModelBase):
    """A TorchScript or ``torch.export`` file, or ``model_loader`` in ``model_script`` returning a module."""

    type: Literal["PyTorchModel"]
    model_path: LaxPath | None = None
    model_loader: str | None = None
    model_script: LaxPath | None = None
    script_dir: LaxPath | None = None
    io_config: IOConfig | None = None

    @model_validator(mode="after")
    def _source(self) -> PyTorchModelConfig:
        if self.model_loader is None and self.model_path is None:
            raise ValueError("a PyTorchModel needs model_path, or model_loader with model_script")
        if self.model_loader is not None and self.model_script is None:
            raise ValueError("model_loader names a function in model_script, which is missing")
        return self

    def display_name(self) -> str:
        if self.name:
            return self.name
        if self.model_path is not None:
            return self.model_path.stem
        return str(self.model_loader)

    def path_problem(self) -> tuple[str, str] | None:
        if self.model_script is not None and not self.model_script.is_file():
            if self.model_script.is_dir():
                return "model_script", f"{self.model_script} is a directory, not a Python file"
            return "model_script", f"file not found: {self.model_script}"
        if self.model_path is None or self.model_path.exists():
            if self.model_path is not None and self.model_path.is_dir() and self.model_loader is None:
                return "model_path", (
                    f"{self.model_path} is a directory; a PyTorchModel without model_loader needs a TorchScript "
                    "or torch.export (.pt2) file"
                )
            return None
        return "model_path", f"file not found: {self.model_path}"

    def files(self) -> list[Path]:
        return [p for p in (self.model_path, self.model_script) if p is not None]


ModelConfig = Annotated[ONNXModelConfig | PyTorchModelConfig, Field(discriminator="type")]
MODEL_TYPES = ("ONNXModel", "PyTorchModel")
