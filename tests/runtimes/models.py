"""Small models built in the test process (no downloads), with the numpy formula each one computes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

#: Fixed weights of the MatMul + Add model: y = x @ W + B.
W = np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0
B = np.array([0.5, -1.0, 2.0], dtype=np.float32)
#: Embedding table of the int64 model: y = TABLE[ids].
TABLE = np.arange(20, dtype=np.float32).reshape(10, 2)


def _save(graph: onnx.GraphProto, path: Path) -> Path:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # readable by every onnxruntime this project supports
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def linear_onnx(path: Path) -> Path:
    """Input ``x`` float [batch, 4] → output ``y`` = x @ W + B."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Add", ["xw", "B"], ["y"])],
        "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        initializer=[numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")],
    )
    return _save(graph, path)


def linear_numpy(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) @ W + B


def two_input_onnx(path: Path) -> Path:
    """Inputs ``ids`` int64 [batch, seq] and ``scale`` float [batch, 1].

    Outputs ``emb`` = TABLE[ids] * scale[..., None] and ``count`` = non-zero ids per row (int64).
    """
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["gathered"], axis=0),
        helper.make_node("Unsqueeze", ["scale", "axis2"], ["scale3"]),
        helper.make_node("Mul", ["gathered", "scale3"], ["emb"]),
        helper.make_node("Cast", ["ids"], ["as_bool"], to=TensorProto.BOOL),
        helper.make_node("Cast", ["as_bool"], ["as_int"], to=TensorProto.INT64),
        helper.make_node("ReduceSum", ["as_int", "axis1"], ["count"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "two_input",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("scale", TensorProto.FLOAT, ["batch", 1]),
        ],
        [
            helper.make_tensor_value_info("emb", TensorProto.FLOAT, ["batch", "seq", 2]),
            helper.make_tensor_value_info("count", TensorProto.INT64, ["batch"]),
        ],
        initializer=[
            numpy_helper.from_array(TABLE, "table"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        ],
    )
    return _save(graph, path)


def two_input_numpy(ids: np.ndarray, scale: np.ndarray) -> list[np.ndarray]:
    return [TABLE[ids] * scale.astype(np.float32)[..., None], (ids != 0).sum(axis=1).astype(np.int64)]


class SmallNet(torch.nn.Module):
    """Linear → ReLU → Linear, seeded so that every test builds the same weights."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.body = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class TwoInputNet(torch.nn.Module):
    """Two named inputs, two outputs: exercises keyword calls and tuple outputs."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.embed = torch.nn.Embedding(10, 4)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, input_ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.embed(input_ids) * mask.unsqueeze(-1)
        return self.head(hidden).sum(dim=1), hidden


class DictNet(torch.nn.Module):
    """Returns a dict with ``logits`` last, as some Hugging Face heads order their outputs."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(2)
        self.proj = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> dict[str, object]:
        hidden = self.proj(x)
        return {"hidden": hidden, "extra": None, "logits": hidden.softmax(-1)}
