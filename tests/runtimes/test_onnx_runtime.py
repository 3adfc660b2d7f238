"""OnnxRuntime against models built here, compared with numpy's and torch's own results."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnxruntime as ort
import psutil
import pytest
import torch

from olive_eval.data.batch import Batch
from olive_eval.errors import EvaluationError
from olive_eval.runtimes import BoundCall, InputSpec, create_runtime, runtime_registry
from olive_eval.runtimes.onnx import OnnxRuntime
from olive_eval.runtimes.onnx_config import ONNXModelConfig
from olive_eval.runtimes.onnx_config import OnnxSettings as InferenceSettings

from .models import SmallNet, linear_numpy, linear_onnx, two_input_numpy, two_input_onnx

CPU = [("CPUExecutionProvider", {})]


def _config(path: Path, **settings: object) -> ONNXModelConfig:
    return ONNXModelConfig.model_validate({"type": "ONNXModel", "model_path": path, "inference_settings": settings})


@pytest.fixture
def linear(tmp_path: Path) -> Path:
    return linear_onnx(tmp_path / "linear.onnx")


@pytest.fixture
def two_input(tmp_path: Path) -> Path:
    return two_input_onnx(tmp_path / "two_input.onnx")


def test_registered_under_its_model_type(linear: Path) -> None:
    assert runtime_registry.get("ONNXModel") is OnnxRuntime
    runtime = create_runtime(_config(linear), "cpu", CPU)
    assert isinstance(runtime, OnnxRuntime)


def test_linear_matches_numpy(linear: Path, rng: np.random.Generator) -> None:
    runtime = OnnxRuntime.load(_config(linear), "cpu", CPU)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    (y,) = runtime.run({"x": x})
    np.testing.assert_allclose(y, linear_numpy(x), rtol=1e-6, atol=1e-6)
    assert y.dtype == np.float32
    assert runtime.input_specs() == [InputSpec("x", np.dtype(np.float32), ("batch", 4))]
    assert not runtime.input_specs()[0].is_static
    assert runtime.output_names() == ["y"]
    assert runtime.describe() == {
        "runtime": "onnxruntime",
        "version": ort.__version__,
        "providers": ["CPUExecutionProvider"],
        "io_bind": False,
        "intra_op_threads": psutil.cpu_count(logical=False),  # 0 in the options: one per physical core
        "inter_op_threads": 1,  # sequential execution uses none beyond the caller
        "allow_spinning": True,
        "execution_mode": "sequential",
    }


def test_float64_input_is_cast_to_the_model_dtype(linear: Path, rng: np.random.Generator) -> None:
    runtime = OnnxRuntime.load(_config(linear), "cpu", CPU)
    x = rng.standard_normal((3, 4))  # float64
    (y,) = runtime.run({"x": x})
    np.testing.assert_allclose(y, linear_numpy(x), rtol=1e-6, atol=1e-6)
    # A non-contiguous view is fine too.
    wide = rng.standard_normal((3, 8)).astype(np.float32)
    (y2,) = runtime.run({"x": wide[:, ::2]})
    np.testing.assert_allclose(y2, linear_numpy(wide[:, ::2]), rtol=1e-6, atol=1e-6)


def test_int64_and_float_inputs_and_outputs(two_input: Path) -> None:
    runtime = OnnxRuntime.load(_config(two_input), "cpu", CPU)
    ids = np.array([[1, 0, 3], [9, 2, 0]], dtype=np.int64)
    scale = np.array([[1.0], [0.5]], dtype=np.float32)
    emb, count = runtime.run({"ids": ids, "scale": scale})
    want_emb, want_count = two_input_numpy(ids, scale)
    np.testing.assert_allclose(emb, want_emb)
    np.testing.assert_array_equal(count, want_count)
    assert count.dtype == np.int64
    assert [s.dtype for s in runtime.input_specs()] == [np.dtype(np.int64), np.dtype(np.float32)]
    assert runtime.output_names() == ["emb", "count"]
    # int32 ids (what some tokenizers give) are widened; extra keys such as labels are ignored.
    emb32, _ = runtime.run({"ids": ids.astype(np.int32), "scale": scale, "labels": np.zeros(2)})
    np.testing.assert_array_equal(emb32, emb)


def test_lossy_cast_to_integer_is_refused(two_input: Path) -> None:
    runtime = OnnxRuntime.load(_config(two_input), "cpu", CPU)
    scale = np.ones((1, 1), dtype=np.float32)
    emb, _ = runtime.run({"ids": np.array([[1.0, 2.0]]), "scale": scale})  # integral floats are fine
    np.testing.assert_allclose(emb, two_input_numpy(np.array([[1, 2]]), scale)[0])
    with pytest.raises(EvaluationError, match="input 'ids' has dtype float64"):
        runtime.run({"ids": np.array([[1.5, 2.0]]), "scale": scale})


@pytest.mark.parametrize("via", ["settings", "override"])
def test_io_bind_on_cpu_matches_plain_run(two_input: Path, via: str) -> None:
    plain = OnnxRuntime.load(_config(two_input), "cpu", CPU)
    if via == "settings":
        bound = OnnxRuntime.load(_config(two_input, io_bind=True), "cpu", CPU)
    else:
        bound = OnnxRuntime.load(_config(two_input), "cpu", CPU, InferenceSettings(io_bind=True))
    assert bound.describe()["io_bind"] is True
    inputs = {"ids": np.array([[4, 0, 7, 1]]), "scale": np.array([[2.0]])}
    want = plain.run(inputs)
    call = bound.bind(_batch(inputs))
    assert isinstance(call, BoundCall)
    for _ in range(3):  # a bound call is reusable: the timing loop calls it many times
        call()
        got = list(call.outputs().values())
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype
    for g, w in zip(bound.run(inputs), want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_plain_bound_call_runs_only_when_called(linear: Path) -> None:
    runtime = OnnxRuntime.load(_config(linear), "cpu", CPU)
    x = np.ones((2, 4), dtype=np.float32)
    call = runtime.bind(_batch({"x": x}))
    assert call.outputs() == {}
    call()
    np.testing.assert_allclose(next(iter(call.outputs().values())), linear_numpy(x), rtol=1e-6)


def test_torch_exported_model_matches_the_module(tmp_path: Path, rng: np.random.Generator) -> None:
    module = SmallNet().eval()
    path = tmp_path / "small.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            module,
            (torch.zeros(2, 4),),
            str(path),
            input_names=["x"],
            output_names=["logits"],
            dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}},
            dynamo=False,
        )
    runtime = OnnxRuntime.load(_config(path), "cpu", CPU)
    x = rng.standard_normal((7, 4)).astype(np.float32)
    (got,) = runtime.run({"x": x})
    with torch.no_grad():
        want = module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert runtime.output_names() == ["logits"]


def test_handle_exposes_session_path_and_run(linear: Path) -> None:
    runtime = OnnxRuntime.load(_config(linear), "cpu", CPU)
    handle = runtime.handle
    assert isinstance(handle.session, ort.InferenceSession)
    assert handle.model_path == linear
    x = np.zeros((1, 4), dtype=np.float32)
    np.testing.assert_allclose(handle.run({"x": x})[0], linear_numpy(x))


def test_session_options_reach_the_session(linear: Path) -> None:
    config = _config(
        linear,
        session_options={
            "intra_op_num_threads": 1,
            "inter_op_num_threads": 1,
            "graph_optimization_level": "ORT_ENABLE_BASIC",
            "execution_mode": "ORT_SEQUENTIAL",
            "log_severity_level": 3,
            "extra_session_config": {"session.use_env_allocators": "0"},
        },
    )
    options = OnnxRuntime.load(config, "cpu", CPU).session.get_session_options()
    assert options.intra_op_num_threads == 1
    assert options.inter_op_num_threads == 1
    assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    assert options.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
    assert options.log_severity_level == 3
    assert options.get_session_config_entry("session.use_env_allocators") == "0"


def test_profiling_file_is_written_on_close(linear: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runtime = OnnxRuntime.load(_config(linear, session_options={"enable_profiling": True}), "cpu", CPU)
    runtime.run({"x": np.zeros((1, 4), dtype=np.float32)})
    runtime.close()
    assert list(tmp_path.glob("onnxruntime_profile_*.json"))
    with pytest.raises(EvaluationError, match="closed"):
        runtime.run({"x": np.zeros((1, 4), dtype=np.float32)})


@pytest.mark.parametrize("provider", ["CUDAExecutionProvider", "FooExecutionProvider"])
def test_unavailable_provider_is_refused(linear: Path, provider: str) -> None:
    if provider in ort.get_available_providers():
        pytest.skip(f"{provider} is available in this build")
    with pytest.raises(EvaluationError) as info:
        OnnxRuntime.load(_config(linear), "gpu", [(provider, {}), ("CPUExecutionProvider", {})])
    message = str(info.value)
    assert f"execution provider '{provider}' is not available in this onnxruntime build" in message
    assert "available: " + ", ".join(ort.get_available_providers()) in message
    assert "\n" not in message


def test_model_providers_win_over_the_run_level_list(linear: Path) -> None:
    with pytest.raises(EvaluationError, match="'FooExecutionProvider' is not available"):
        OnnxRuntime.load(_config(linear, execution_provider="FooExecutionProvider"), "cpu", CPU)
    # and the other way round: a bad run-level list is not consulted when the model names its providers
    runtime = OnnxRuntime.load(
        _config(linear, execution_provider="CPUExecutionProvider"), "cpu", [("FooExecutionProvider", {})]
    )
    assert runtime.describe()["providers"] == ["CPUExecutionProvider"]


def test_silent_fallback_is_refused(linear: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ORT drops a provider that fails to initialise and carries on with CPU; the runtime must not."""
    real_session = ort.InferenceSession
    created = []

    class FallingBackSession(real_session):  # type: ignore[misc, valid-type]
        def __init__(self, path: str, sess_options=None, providers=None, provider_options=None) -> None:
            created.append(list(providers))
            super().__init__(path, sess_options=sess_options, providers=["CPUExecutionProvider"])

    available = [*ort.get_available_providers(), "CUDAExecutionProvider"]
    monkeypatch.setattr(ort, "get_available_providers", lambda: available)
    monkeypatch.setattr(ort, "InferenceSession", FallingBackSession)
    with pytest.raises(EvaluationError) as info:
        OnnxRuntime.load(_config(linear), "gpu", [("CUDAExecutionProvider", {"device_id": 0}), *CPU])
    message = str(info.value)
    assert created == [["CUDAExecutionProvider", "CPUExecutionProvider"]]
    assert "'CUDAExecutionProvider' was requested" in message
    assert "fell back to CPUExecutionProvider" in message
    assert "available: " + ", ".join(available) in message


def test_fallback_is_disabled_on_the_session(linear: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(ort.InferenceSession, "disable_fallback", lambda self: calls.append(self))
    runtime = OnnxRuntime.load(_config(linear), "cpu", CPU)
    assert calls == [runtime.session]


def test_missing_model_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.onnx"
    with pytest.raises(EvaluationError, match=f"model file {missing} does not exist"):
        OnnxRuntime.load(_config(missing), "cpu", CPU)


def test_unloadable_model_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not a protobuf")
    with pytest.raises(EvaluationError) as info:
        OnnxRuntime.load(_config(bad), "cpu", CPU)
    assert str(info.value).startswith(f"onnxruntime cannot load {bad}: ")
    assert "\n" not in str(info.value)


def test_missing_input_lists_needed_and_given_names(two_input: Path) -> None:
    runtime = OnnxRuntime.load(_config(two_input), "cpu", CPU)
    with pytest.raises(
        EvaluationError, match=r"expects input\(s\) ids, scale; the batch has ids, input_ids \(missing: scale\)"
    ):
        runtime.bind(_batch({"ids": np.zeros((1, 2), dtype=np.int64), "input_ids": np.zeros((1, 2))}))
    with pytest.raises(EvaluationError, match=r"expects input\(s\) ids, scale; the batch has nothing"):
        runtime.run({})


@pytest.mark.gpu
def test_cuda_provider_with_io_bind(two_input: Path) -> None:
    """Needs onnxruntime-gpu and a CUDA device: inputs go to the GPU at bind, outputs come back after."""
    cuda = [("CUDAExecutionProvider", {"device_id": 0}), *CPU]
    runtime = OnnxRuntime.load(_config(two_input, io_bind=True), "gpu", cuda)
    assert runtime.describe()["providers"][0] == "CUDAExecutionProvider"
    assert runtime._io_device() == ("cuda", 0)
    ids = np.array([[1, 0, 3], [9, 2, 0]], dtype=np.int64)
    scale = np.array([[1.0], [0.5]], dtype=np.float32)
    call = runtime.bind(_batch({"ids": ids, "scale": scale}))
    call()
    emb, count = call.outputs()
    want_emb, want_count = two_input_numpy(ids, scale)
    np.testing.assert_allclose(emb, want_emb)
    np.testing.assert_array_equal(count, want_count)
    plain = OnnxRuntime.load(_config(two_input), "gpu", cuda)
    for got, want in zip(plain.run({"ids": ids, "scale": scale}), [want_emb, want_count], strict=True):
        np.testing.assert_allclose(got, want)


def _batch(columns: dict) -> Batch:
    return Batch(dict(columns), list(columns))


def test_an_input_shape_is_checked_on_every_new_shape_not_only_the_first(
    linear: Path, rng: np.random.Generator
) -> None:
    """The check runs once per shape seen (batches of one shape skip it): a later batch of another shape that the
    graph does not accept is still named, and one it accepts is still run."""
    runtime = OnnxRuntime.load(_config(linear), "cpu", CPU)
    for n in (5, 5, 3):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        out = runtime.predict(Batch({"x": x}, ["x"]))
        np.testing.assert_allclose(out["y"], linear_numpy(x), rtol=1e-6, atol=1e-6)
    with pytest.raises(EvaluationError, match=r"input 'x' of linear.onnx has shape \[5, 3\]; the model expects"):
        runtime.predict(Batch({"x": rng.standard_normal((5, 3)).astype(np.float32)}, ["x"]))
