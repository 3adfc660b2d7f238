"""An ONNX Runtime ``InferenceSession`` opened on exactly the providers asked for (an unavailable provider or a
silent fallback is an error), and the two ways a bound batch calls it: plain ``run``, or IO binding that keeps
inputs and outputs on the device.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort

from olive_eval.errors import EvaluationError, first_line
from olive_eval.runtimes.base import BoundCall, Outputs
from olive_eval.runtimes.onnx_config import OnnxSettings, SessionOptions
from olive_eval.runtimes.providers import ProviderSpec

__all__ = ["IOBindingCall", "PlainCall", "open_session", "session_options"]


def session_options(options: SessionOptions) -> ort.SessionOptions:
    so = ort.SessionOptions()
    if options.intra_op_num_threads is not None:
        so.intra_op_num_threads = options.intra_op_num_threads
    if options.inter_op_num_threads is not None:
        so.inter_op_num_threads = options.inter_op_num_threads
    if options.graph_optimization_level is not None:
        so.graph_optimization_level = ort.GraphOptimizationLevel(int(options.graph_optimization_level))
    if options.execution_mode is not None:
        so.execution_mode = ort.ExecutionMode(int(options.execution_mode))
    if options.log_severity_level is not None:
        so.log_severity_level = options.log_severity_level
    so.enable_profiling = options.enable_profiling
    for key, value in options.extra_session_config.items():
        so.add_session_config_entry(key, value)
    return so


class PlainCall(BoundCall):
    def __init__(self, session: ort.InferenceSession, feed: dict[str, np.ndarray]) -> None:
        self._session = session
        self._feed = feed
        self._names = [o.name for o in session.get_outputs()]
        self._outputs: list[np.ndarray] = []

    def __call__(self) -> None:
        self._outputs = self._session.run(None, self._feed)

    def outputs(self) -> Outputs:
        return dict(zip(self._names, self._outputs, strict=True)) if self._outputs else {}


class IOBindingCall(BoundCall):
    """Inputs copied to the device at bind time, outputs left there until ``outputs()`` is asked for."""

    def __init__(self, session: ort.InferenceSession, feed: dict[str, np.ndarray], device: tuple[str, int]) -> None:
        self._session = session
        self._binding = session.io_binding()
        device_type, device_id = device
        # Keep the OrtValues alive as long as the binding refers to them.
        self._values = {
            name: ort.OrtValue.ortvalue_from_numpy(array, device_type, device_id) for name, array in feed.items()
        }
        for name, value in self._values.items():
            self._binding.bind_ortvalue_input(name, value)
        self._binding.synchronize_inputs()
        for out in session.get_outputs():
            self._binding.bind_output(out.name, device_type, device_id)

    def __call__(self) -> None:
        self._session.run_with_iobinding(self._binding)
        self._binding.synchronize_outputs()

    def outputs(self) -> Outputs:
        names = [o.name for o in self._session.get_outputs()]
        return dict(zip(names, self._binding.copy_outputs_to_cpu(), strict=True))


def open_session(path: Path, settings: OnnxSettings, providers: list[ProviderSpec]) -> ort.InferenceSession:
    """A session on exactly the providers asked for: an unavailable one, or a silent fallback, is an error."""
    names = [name for name, _ in providers]
    available = list(ort.get_available_providers())
    for name in names:
        if name not in available:
            raise EvaluationError(
                f"execution provider '{name}' is not available in this onnxruntime build; "
                f"available: {', '.join(available)}"
            )
    if not path.is_file():
        raise EvaluationError(f"model file {path} does not exist")
    try:
        session = ort.InferenceSession(
            str(path),
            sess_options=session_options(settings.session_options),
            providers=names,
            provider_options=[dict(opts) for _, opts in providers],
        )
    except Exception as exc:
        raise EvaluationError(f"onnxruntime cannot load {path}: {first_line(exc)}") from exc
    used = list(session.get_providers())
    missing = [name for name in names if name not in used]
    if missing:
        raise EvaluationError(
            f"execution provider '{missing[0]}' was requested but the session for {path} fell back to "
            f"{', '.join(used)} (it failed to initialise; check its libraries and options); "
            f"available: {', '.join(available)}"
        )
    session.disable_fallback()
    return session
