"""The ``ONNXModel`` config: what a user writes for an ONNX model (its file, session and provider settings, the
tokenizer or processor beside it), validated apart from the session it becomes.

Its own concept: a config is checked, hashed and compared when a run is planned, before (and without)
onnxruntime opening a session; ``runtimes/onnx.py`` turns it into one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from olive_eval.runtimes.base import ModelConfig
from olive_eval.runtimes.providers import ProviderSpec, normalize_providers
from olive_eval.strict_model import LaxPath, StrictModel

GRAPH_OPTIMIZATION_LEVELS = {
    "ORT_DISABLE_ALL": 0,
    "ORT_ENABLE_BASIC": 1,
    "ORT_ENABLE_EXTENDED": 2,
    "ORT_ENABLE_ALL": 99,
}
EXECUTION_MODES = {"ORT_SEQUENTIAL": 0, "ORT_PARALLEL": 1}


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


class OnnxSettings(StrictModel):
    """ONNX Runtime settings: a model's ``inference_settings``, or a metric's ``inference_settings.onnx``.

    ``execution_provider`` wins over the run's ``execution_providers``.
    """

    execution_provider: list[ProviderSpec] | None = None
    provider_options: list[dict[str, Any]] | None = None
    session_options: SessionOptions = Field(default_factory=SessionOptions)
    io_bind: bool = False

    @field_validator("execution_provider", mode="before")
    @classmethod
    def _providers(cls, v: Any) -> list[ProviderSpec] | None:
        return normalize_providers(v)

    @model_validator(mode="after")
    def _options_match(self) -> OnnxSettings:
        if self.provider_options is not None:
            if self.execution_provider is None or len(self.provider_options) != len(self.execution_provider):
                raise ValueError("provider_options needs one entry per execution_provider")
            self.execution_provider = [
                (name, {**opts, **extra})
                for (name, opts), extra in zip(self.execution_provider, self.provider_options, strict=True)
            ]
            self.provider_options = None
        return self

    def merged_with(self, override: OnnxSettings | None) -> OnnxSettings:
        """These settings with the keys ``override`` sets explicitly taking precedence (nothing is mutated)."""
        if override is None:
            return self
        data = self.model_dump()
        data.update(override.model_dump(exclude_unset=True))
        return OnnxSettings.model_validate(data)


class ONNXModelConfig(ModelConfig):
    type: Literal["ONNXModel"]
    model_path: LaxPath = Field(description="An .onnx file, or a folder holding one (see onnx_file_name).")
    onnx_file_name: str | None = Field(None, description="The .onnx file inside a model_path folder (Olive's key).")
    inference_settings: OnnxSettings = Field(default_factory=OnnxSettings)
    processor_path: LaxPath | None = Field(
        None, description="The folder of the tokenizer or processor the data is prepared with for this model."
    )
    model_attributes: dict[str, Any] | None = Field(
        None, description="Olive's model attributes; a local folder in 'processor_path' or '_name_or_path' is used."
    )

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

    def path_problem(self, allow_download: bool = False) -> tuple[str, str] | None:
        path = self.model_path
        if not path.exists():
            return "model_path", f"file not found: {path}"
        if path.is_dir():
            if (path / "genai_config.json").is_file() and self.onnx_file_name is None:
                return "type", (
                    f"{path} holds genai_config.json: an ONNX Runtime GenAI model, which generates token by token; "
                    'use "type": "GenAIModel" (or name its .onnx file to run the graph alone)'
                )
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

    def processor_folder(self) -> Path | None:
        if self.processor_path is not None:
            return self.processor_path
        for key in ("processor_path", "_name_or_path"):
            value = (self.model_attributes or {}).get(key)
            if isinstance(value, str) and Path(value).is_dir():
                return Path(value)
        return None
