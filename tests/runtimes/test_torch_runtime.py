"""TorchRuntime with TorchScript, torch.export and model_loader models, compared with the modules."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

from olive_eval.data.batch import Batch
from olive_eval.errors import EvaluationError
from olive_eval.runtimes import BoundCall, InputSpec, create_runtime, runtime_registry
from olive_eval.runtimes.torch import TorchRuntime
from olive_eval.runtimes.torch_config import PyTorchModelConfig

from .models import DictNet, SmallNet, TwoInputNet

CPU = [("CPUExecutionProvider", {})]

# TorchScript is deprecated in recent torch, yet users still hand in .pt files: the tests build some.
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")


def _config(**fields: object) -> PyTorchModelConfig:
    return PyTorchModelConfig.model_validate({"type": "PyTorchModel", **fields})


def _reference(module: torch.nn.Module, *args: torch.Tensor) -> list[np.ndarray]:
    with torch.no_grad():
        out = module(*args)
    return [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]


def _assert_close(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, atol=1e-6)


def _write_loader(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "user_model.py"
    script.write_text(textwrap.dedent(body))
    return script


@pytest.mark.parametrize("how", ["trace", "script"])
def test_torchscript_single_input(tmp_path: Path, rng: np.random.Generator, how: str) -> None:
    module = SmallNet().eval()
    example = torch.zeros(2, 4)
    scripted = torch.jit.trace(module, example) if how == "trace" else torch.jit.script(module)
    path = tmp_path / "small.pt"
    scripted.save(str(path))
    runtime = create_runtime(_config(model_path=path), "cpu", CPU)
    assert isinstance(runtime, TorchRuntime)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    got = runtime.run({"x": x})
    _assert_close(got, _reference(module, torch.from_numpy(x)))
    assert got[0].dtype == np.float32
    assert runtime.output_names() == ["output_0"]
    assert runtime.input_specs() == []
    assert runtime.describe() == {
        "runtime": "torch",
        "version": torch.__version__,
        "device": "cpu",
        "format": "torchscript",
        "threads": torch.get_num_threads(),
    }


def test_float64_inputs_become_float32(tmp_path: Path, rng: np.random.Generator) -> None:
    module = SmallNet().eval()
    path = tmp_path / "small.pt"
    torch.jit.trace(module, torch.zeros(1, 4)).save(str(path))
    runtime = TorchRuntime.load(_config(model_path=path), "cpu", CPU)
    x = rng.standard_normal((3, 4))  # float64: the float32 weights would refuse it as is
    _assert_close(runtime.run({"x": x}), _reference(module, torch.from_numpy(x).float()))


def test_torchscript_two_inputs_by_keyword(tmp_path: Path) -> None:
    module = TwoInputNet().eval()
    ids = torch.tensor([[1, 2, 3], [4, 0, 9]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    path = tmp_path / "two.pt"
    torch.jit.trace(module, (ids, mask)).save(str(path))
    runtime = TorchRuntime.load(_config(model_path=path), "cpu", CPU)
    assert runtime.output_names() == []  # unknown until the first call
    # Keys in the opposite order to the signature: they go by name, not by position.
    got = runtime.run({"mask": mask.numpy(), "input_ids": ids.numpy()})
    _assert_close(got, _reference(module, ids, mask))
    assert runtime.output_names() == ["output_0", "output_1"]


def test_bound_call_holds_device_tensors_and_is_reusable(tmp_path: Path) -> None:
    module = SmallNet().eval()
    path = tmp_path / "small.pt"
    torch.jit.trace(module, torch.zeros(1, 4)).save(str(path))
    runtime = TorchRuntime.load(_config(model_path=path), "cpu", CPU)
    x = np.ones((2, 4), dtype=np.float32)
    call = runtime.bind(_batch({"x": x}))
    assert isinstance(call, BoundCall)
    assert all(t.device.type == "cpu" and t.dtype == torch.float32 for t in call._tensors.values())
    for _ in range(2):  # the timing loop calls one bound call many times
        call()
        _assert_close(list(call.outputs().values()), _reference(module, torch.from_numpy(x)))


def test_torch_export_archive(tmp_path: Path, rng: np.random.Generator) -> None:
    module = SmallNet().eval()
    path = tmp_path / "small.pt2"
    torch.export.save(torch.export.export(module, (torch.zeros(2, 4),)), str(path))
    runtime = TorchRuntime.load(_config(model_path=path), "cpu", CPU)
    assert runtime.describe()["format"] == "torch.export"
    x = rng.standard_normal((2, 4)).astype(np.float32)
    _assert_close(runtime.run({"x": x}), _reference(module, torch.from_numpy(x)))


@pytest.mark.parametrize("style", ["positional", "keyword", "mixed"])
def test_torch_export_two_inputs_follow_the_exported_call(tmp_path: Path, style: str) -> None:
    """An exported module only takes the positional/keyword split it was exported with."""
    module = TwoInputNet().eval()
    ids = torch.tensor([[1, 2, 3], [4, 0, 9]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    args, kwargs = {
        "positional": ((ids, mask), {}),
        "keyword": ((), {"input_ids": ids, "mask": mask}),
        "mixed": ((ids,), {"mask": mask}),
    }[style]
    path = tmp_path / "two.bin"  # an export archive need not be called .pt2
    torch.export.save(torch.export.export(module, args, kwargs), str(path))
    runtime = TorchRuntime.load(_config(model_path=path), "cpu", CPU)
    got = runtime.run({"mask": mask.numpy(), "input_ids": ids.numpy(), "labels": np.zeros(2)})
    _assert_close(got, _reference(module, ids, mask))
    with pytest.raises(EvaluationError, match=r"needs input\(s\) mask; given: input_ids"):
        runtime.bind(_batch({"input_ids": ids.numpy()}))


def test_model_loader_in_a_user_script(tmp_path: Path, rng: np.random.Generator) -> None:
    module = SmallNet().eval()
    weights = tmp_path / "weights.bin"
    torch.save(module.state_dict(), weights)
    script = _write_loader(
        tmp_path,
        """
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))

            def forward(self, x):
                return self.body(x)

        def load(model_path):
            net = Net()
            net.load_state_dict(torch.load(model_path))
            net.train()  # the runtime must put it in eval mode
            return net
        """,
    )
    config = _config(model_path=weights, model_loader="load", model_script=script, script_dir=tmp_path)
    runtime = TorchRuntime.load(config, "cpu", CPU)
    assert not runtime.module.training
    assert runtime.describe()["format"] == "model_loader"
    x = rng.standard_normal((4, 4)).astype(np.float32)
    _assert_close(runtime.run({"x": x}), _reference(module, torch.from_numpy(x)))
    assert runtime.handle.module is runtime.module


def test_loader_returning_a_plain_callable_with_io_config(tmp_path: Path) -> None:
    """io_config gives names, shapes and dtypes; an identity function shows each input's dtype."""
    script = _write_loader(
        tmp_path, "def load(model_path):\n    assert model_path is None\n    return lambda **kw: kw\n"
    )
    config = _config(
        model_loader="load",
        model_script=script,
        io_config={
            "input_names": ["ids", "scale"],
            "input_shapes": [[1, 3], [1, 1]],
            "input_types": ["int32", "float64"],
        },
    )
    runtime = TorchRuntime.load(config, "cpu", CPU)
    assert runtime.input_specs() == [
        InputSpec("ids", np.dtype(np.int32), (1, 3)),
        InputSpec("scale", np.dtype(np.float64), (1, 1)),
    ]
    assert runtime.input_specs()[0].is_static
    ids, scale = runtime.run({"ids": np.array([[1, 2, 3]]), "scale": np.array([[0.5]]), "labels": np.zeros(1)})
    assert ids.dtype == np.int32 and scale.dtype == np.float64  # io_config wins over the float64 → float32 rule
    assert runtime.output_names() == ["ids", "scale"]
    with pytest.raises(EvaluationError, match=r"needs input\(s\) scale; given: ids"):
        runtime.run({"ids": np.array([[1, 2, 3]])})


def test_dict_output_puts_logits_first(rng: np.random.Generator) -> None:
    module = DictNet().eval()
    runtime = TorchRuntime(module, torch.device("cpu"), None, None, "model_loader")
    x = rng.standard_normal((2, 4)).astype(np.float32)
    logits, hidden = runtime.run({"x": x})
    with torch.no_grad():
        want = module(torch.from_numpy(x))
    np.testing.assert_allclose(logits, want["logits"].numpy(), atol=1e-6)
    np.testing.assert_allclose(hidden, want["hidden"].numpy(), atol=1e-6)
    assert runtime.output_names() == ["logits", "hidden"]  # "extra" is None: not an output


def test_model_output_like_object() -> None:
    @dataclass
    class Output:
        loss: torch.Tensor | None
        logits: torch.Tensor
        hidden_states: tuple[torch.Tensor, ...]

    runtime = TorchRuntime(lambda x: Output(None, x * 2, (x, x + 1)), torch.device("cpu"), None, None, "model_loader")
    x = np.arange(3, dtype=np.float32)
    got = runtime.run({"x": x})
    _assert_close(got, [x * 2, x, x + 1])
    assert runtime.output_names() == ["logits", "hidden_states.0", "hidden_states.1"]


def test_loader_returning_a_non_module_is_refused(tmp_path: Path) -> None:
    script = _write_loader(tmp_path, "def load(model_path):\n    return {'weights': [1, 2]}\n")
    with pytest.raises(EvaluationError) as info:
        TorchRuntime.load(_config(model_loader="load", model_script=script), "cpu", CPU)
    assert "model_loader 'load'" in str(info.value)
    assert "returned dict" in str(info.value)


def test_loader_that_raises(tmp_path: Path) -> None:
    script = _write_loader(tmp_path, "def load(model_path):\n    raise FileNotFoundError('no checkpoint here')\n")
    with pytest.raises(EvaluationError, match=r"model_loader 'load' .* raised FileNotFoundError: no checkpoint here"):
        TorchRuntime.load(_config(model_loader="load", model_script=script), "cpu", CPU)


def test_gpu_without_cuda_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    path = tmp_path / "small.pt"
    torch.jit.trace(SmallNet().eval(), torch.zeros(1, 4)).save(str(path))
    with pytest.raises(EvaluationError, match="device gpu was requested but torch has no CUDA device"):
        TorchRuntime.load(_config(model_path=path), "gpu", CPU)


def test_missing_and_unreadable_model_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.pt"
    with pytest.raises(EvaluationError, match=f"model file {missing} does not exist"):
        TorchRuntime.load(_config(model_path=missing), "cpu", CPU)
    state_dict = tmp_path / "state.pt"
    torch.save(SmallNet().state_dict(), state_dict)
    with pytest.raises(EvaluationError, match=r"is not a TorchScript or torch\.export file .*use model_loader"):
        TorchRuntime.load(_config(model_path=state_dict), "cpu", CPU)


def test_registered_under_its_model_type() -> None:
    assert runtime_registry.get("PyTorchModel") is TorchRuntime


@pytest.mark.gpu
def test_cuda_torchscript_and_export(tmp_path: Path, rng: np.random.Generator) -> None:
    """Needs a CUDA device: the module and the bound inputs live on cuda, outputs come back as host arrays."""
    module = SmallNet().eval()
    scripted = tmp_path / "small.pt"
    torch.jit.trace(module, torch.zeros(1, 4)).save(str(scripted))
    exported = tmp_path / "small.pt2"
    torch.export.save(torch.export.export(module, (torch.zeros(2, 4),)), str(exported))
    x = rng.standard_normal((2, 4)).astype(np.float32)
    want = _reference(module, torch.from_numpy(x))
    for path in (scripted, exported):
        runtime = TorchRuntime.load(_config(model_path=path), "gpu", CPU)
        assert runtime.describe()["device"] == "cuda"
        call = runtime.bind(_batch({"x": x}))
        assert all(t.is_cuda for t in call._tensors.values())
        call()
        got = list(call.outputs().values())
        assert isinstance(got[0], np.ndarray)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, atol=1e-5)


def _batch(columns: dict) -> Batch:
    return Batch(dict(columns), list(columns))
