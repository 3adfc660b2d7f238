"""ONNX Runtime: one ``InferenceSession`` per model, with provider checks that refuse silent CPU fallback.

The tokenized columns of text data (``input_ids``, ``attention_mask``, ``token_type_ids``) feed the graph's
inputs of the same names, so an exported encoder is evaluated on the same data as its PyTorch baseline.
The model's config (file, settings, the tokenizer beside it) is ``runtimes/onnx_config.py``; opening the session
and calling it, ``runtimes/onnx_session.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from olive_eval.data.batch import Batch, Columns
from olive_eval.errors import EvaluationError
from olive_eval.records.provenance import physical_cores
from olive_eval.runtimes.base import BoundCall, Device, InputSpec, Outputs, Runtime, runtime_registry
from olive_eval.runtimes.inputs import cast_input
from olive_eval.runtimes.onnx_config import ONNXModelConfig, OnnxSettings
from olive_eval.runtimes.onnx_session import IOBindingCall, PlainCall, open_session
from olive_eval.runtimes.providers import ProviderSpec, normalize_providers
from olive_eval.strict_model import StrictModel

#: ORT type strings → numpy dtypes. bfloat16 and float8 have no numpy dtype and are not listed.
ORT_TO_NUMPY: dict[str, np.dtype] = {
    f"tensor({ort_name})": np.dtype(np_name)
    for ort_name, np_name in {
        "float": "float32",
        "float16": "float16",
        "double": "float64",
        "int8": "int8",
        "int16": "int16",
        "int32": "int32",
        "int64": "int64",
        "uint8": "uint8",
        "uint16": "uint16",
        "uint32": "uint32",
        "uint64": "uint64",
        "bool": "bool",
        "string": "object",
    }.items()
}

#: Providers whose memory ``OrtValue`` addresses as "cuda"; DirectML as "dml"; the rest bind on the host.
_IO_DEVICE = {
    "CUDAExecutionProvider": "cuda",
    "TensorrtExecutionProvider": "cuda",
    "NvTensorRTRTXExecutionProvider": "cuda",
    "DmlExecutionProvider": "dml",
}


def _check_shape(spec: InputSpec, shape: tuple[int, ...], model: str) -> None:
    """A rank or a fixed dimension the model does not accept, named before ONNX Runtime's terse error."""
    if spec.shape is None:
        return
    expected = [d if isinstance(d, int) and d > 0 else (d or "?") for d in spec.shape]
    fits = len(shape) == len(expected) and all(
        not isinstance(want, int) or want == got for want, got in zip(expected, shape, strict=True)
    )
    if not fits:
        raise EvaluationError(f"input '{spec.name}' of {model} has shape {list(shape)}; the model expects {expected}")


class OnnxRuntime(Runtime):
    """An ONNX model in an ``InferenceSession``.

    It is also its own ``handle`` for ``evaluate_func``: ``.session``, ``.model_path``, ``.run(inputs)``, and
    Olive's model handler API (``prepare_session``, ``run_session``, ``inference_settings``), so an Olive
    user script runs unchanged.
    """

    model_type = "ONNXModel"
    settings_key = "onnx"
    Settings = OnnxSettings

    def __init__(
        self,
        session: ort.InferenceSession,
        model_path: Path,
        settings: OnnxSettings,
        device: Device = "cpu",
        providers: list[ProviderSpec] | None = None,
    ) -> None:
        self._session: ort.InferenceSession | None = session
        self.model_path = model_path
        self.settings = settings
        self.device = device
        self._providers = list(providers or [(name, {}) for name in session.get_providers()])
        self._specs: list[InputSpec] | None = None
        self._input_types = {i.name: i.type for i in session.get_inputs()}
        #: Per graph input, the dtype it is fed as (looked up on the first batch: an unfeedable type is its error).
        self._dtypes: dict[str, np.dtype] = {}
        self._outputs = [o.name for o in session.get_outputs()]
        #: The (input, shape) pairs already checked against the graph: each batch of the same shape skips it.
        self._fitting: set[tuple[str, tuple[int, ...]]] = set()

    @classmethod
    def load(
        cls,
        model_config: Any,
        device: Device,
        execution_providers: list[ProviderSpec],
        settings: StrictModel | None = None,
    ) -> OnnxRuntime:
        """Create the session. ``device`` is carried by the providers the engine already chose for it;
        ``settings`` (a metric's ``inference_settings.onnx``) override the model's own."""
        assert settings is None or isinstance(settings, OnnxSettings)
        merged = model_config.inference_settings.merged_with(settings)
        providers = list(merged.execution_provider or execution_providers) or [("CPUExecutionProvider", {})]
        path = Path(model_config.onnx_path)
        return cls(open_session(path, merged, providers), path, merged, device, providers)

    @classmethod
    def device_problem(cls, model_config: Any, device: Device, execution_providers: list[ProviderSpec]) -> str | None:
        """On gpu, a provider of the run's that this onnxruntime build lacks (a model naming its own is its own)."""
        if device != "gpu" or model_config.inference_settings.execution_provider:
            return None
        available = ort.get_available_providers()
        missing = next((name for name, _ in execution_providers if name not in available), None)
        if missing is None:
            return None
        return f"execution provider '{missing}' is not in this onnxruntime build (it has {', '.join(available)})"

    # ------------------------------------------------------------------ Olive's model handler API
    @property
    def inference_settings(self) -> dict[str, Any]:
        """The session settings in Olive's shape: ``execution_provider`` and ``provider_options`` lists."""
        data = self.settings.model_dump(exclude={"execution_provider", "provider_options"})
        data["execution_provider"] = [name for name, _ in self._providers]
        data["provider_options"] = [dict(options) for _, options in self._providers]
        return data

    def prepare_session(
        self,
        inference_settings: dict[str, Any] | None = None,
        device: str = "cpu",
        execution_providers: str | list[Any] | None = None,
        rank: int | None = None,
    ) -> ort.InferenceSession:
        """An ``onnxruntime.InferenceSession``, as Olive's ``ONNXModelHandler.prepare_session`` returns.

        ``inference_settings`` override the model's; providers come from them, else from
        ``execution_providers``, else the run's. The session already loaded is reused when nothing differs.
        """
        override = OnnxSettings.model_validate(inference_settings) if inference_settings else None
        settings = self.settings.merged_with(override)
        providers = settings.execution_provider or normalize_providers(execution_providers) or self._providers
        if str(device) == "gpu" and rank is not None:
            providers = [
                (name, {**opts, "device_id": rank}) if name in _IO_DEVICE else (name, opts) for name, opts in providers
            ]
        if settings == self.settings and list(providers) == list(self._providers):
            return self.session
        return open_session(self.model_path, settings, list(providers))

    def run_session(self, session: Any = None, inputs: Any = None, **kwargs: Any) -> list[np.ndarray]:
        """``session.run(output_names, inputs, **kwargs)``, as Olive's handler runs it."""
        output_names = kwargs.pop("output_names", None)
        return (session or self.session).run(output_names, inputs, **kwargs)

    @property
    def session(self) -> ort.InferenceSession:
        if self._session is None:
            raise EvaluationError(f"the session for {self.model_path} was closed")
        return self._session

    def _io_device(self) -> tuple[str, int]:
        name = self.session.get_providers()[0]
        device_type = _IO_DEVICE.get(name, "cpu")
        if device_type == "cpu":
            return "cpu", 0
        options = self.session.get_provider_options().get(name, {})
        return device_type, int(options.get("device_id", 0) or 0)

    def input_specs(self) -> list[InputSpec]:
        if self._specs is None:
            self._specs = [
                InputSpec(
                    name=i.name,
                    dtype=self._numpy_dtype(i.name),
                    shape=tuple(i.shape) if i.shape is not None else None,
                )
                for i in self.session.get_inputs()
            ]
        return list(self._specs)

    def _numpy_dtype(self, name: str) -> np.dtype:
        ort_type = self._input_types[name]
        if ort_type not in ORT_TO_NUMPY:
            raise EvaluationError(
                f"input '{name}' of {self.model_path} has type {ort_type}, which cannot be fed from numpy"
            )
        return ORT_TO_NUMPY[ort_type]

    def output_names(self) -> list[str]:
        return list(self._outputs)

    def _feed(self, batch: Batch) -> dict[str, np.ndarray]:
        """The graph's inputs from a batch's model inputs, cast to their dtypes.

        Columns named like the graph's inputs feed them (a tokenizer's ``input_ids``, ``attention_mask``,
        ``token_type_ids``); extra columns are left out. A single column feeds a single-input graph
        whatever its name. Anything else is an error listing what the graph expects.
        """
        fast = self._fed_as_is(batch.columns, batch.inputs)
        if fast is not None:
            return fast
        inputs, start = batch.model_inputs(), batch.start
        wanted = list(self._input_types)
        if not all(name in inputs for name in wanted):
            if len(wanted) == 1 and len(inputs) == 1:
                inputs = {wanted[0]: next(iter(inputs.values()))}
            else:
                missing = [name for name in wanted if name not in inputs]
                raise EvaluationError(
                    f"{self.model_path.name} expects input(s) {', '.join(wanted)}; the batch has "
                    f"{', '.join(inputs) or 'nothing'} (missing: {', '.join(missing)}); name the data's columns "
                    "after the inputs, or map them with pre_process_data_config.input_cols"
                )
        feed = {name: cast_input(name, inputs[name], self._numpy_dtype(name), start) for name in wanted}
        if any((name, value.shape) not in self._fitting for name, value in feed.items()):
            for spec in self.input_specs():
                _check_shape(spec, feed[spec.name].shape, self.model_path.name)
                self._fitting.add((spec.name, feed[spec.name].shape))
        self._dtypes = {name: value.dtype for name, value in feed.items()}
        return feed

    def _fed_as_is(self, columns: Columns, inputs: list[str]) -> dict[str, np.ndarray] | None:
        """The feed when every model input (``inputs``, of ``columns``) is already what :meth:`_feed` would make of
        it (a C-contiguous array of the input's dtype, of a shape already checked), as an ordinary batch after the
        first is: the same arrays, without building the model inputs, the casts' and checks' few microseconds per
        batch. None: the full path decides."""
        dtypes = self._dtypes
        if not dtypes:
            return None
        only = len(dtypes) == 1 and len(inputs) == 1  # a single column feeds a single input, whatever its name
        feed = {}
        for name, dtype in dtypes.items():
            value = columns.get(inputs[0]) if only else columns.get(name) if name in inputs else None
            if (
                type(value) is not np.ndarray
                or value.dtype != dtype
                or not value.flags.c_contiguous
                or (name, value.shape) not in self._fitting
            ):
                return None
            feed[name] = value
        return feed

    def bind(self, batch: Batch) -> BoundCall:
        feed = self._feed(batch)
        if self.settings.io_bind:
            return IOBindingCall(self.session, feed, self._io_device())
        return PlainCall(self.session, feed)

    def predict(self, batch: Batch) -> Outputs:
        if self.settings.io_bind:
            call = self.bind(batch)
            call()
            return call.outputs()
        outputs = self.session.run(None, self._feed(batch))
        if len(outputs) == 1 == len(self._outputs):  # a classifier's logits: cheaper than zip's strict check
            return {self._outputs[0]: outputs[0]}
        return dict(zip(self._outputs, outputs, strict=True))

    def describe(self) -> dict[str, Any]:
        """What ran, and the settings a latency figure depends on, with ONNX Runtime's defaults resolved:
        0 intra-op threads means one per physical core; inter-op threads serve only the parallel mode."""
        options = self.session.get_session_options()
        parallel = options.execution_mode == ort.ExecutionMode.ORT_PARALLEL
        try:
            spinning = options.get_session_config_entry("session.intra_op.allow_spinning") != "0"
        except RuntimeError:  # not set: ONNX Runtime spins by default
            spinning = True
        return {
            "runtime": "onnxruntime",
            "version": ort.__version__,
            "providers": list(self.session.get_providers()),
            "io_bind": bool(self.settings.io_bind),
            "intra_op_threads": options.intra_op_num_threads or physical_cores(),
            "inter_op_threads": (options.inter_op_num_threads or physical_cores()) if parallel else 1,
            "allow_spinning": spinning,
            "execution_mode": "parallel" if parallel else "sequential",
        }

    def close(self) -> None:
        """End profiling (ORT writes its trace file then) and drop the session."""
        session, self._session = self._session, None
        if session is not None and self.settings.session_options.enable_profiling:
            session.end_profiling()


OnnxRuntime.Config = ONNXModelConfig
runtime_registry.register("ONNXModel", OnnxRuntime)
