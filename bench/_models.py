"""Models and data the benchmarks build for themselves (nothing is downloaded)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import accumulate, pairwise
from pathlib import Path

import numpy as np
import onnx
import pyarrow as pa
import pyarrow.parquet as pq
from onnx import TensorProto, helper, numpy_helper


def mlp_onnx(path: Path, sizes: list[int], seed: int = 0) -> Path:
    """A ReLU MLP as an ONNX graph: input "x" [batch, sizes[0]] → output "logits" [batch, sizes[-1]]."""
    rng = np.random.default_rng(seed)
    nodes, inits, prev = [], [], "x"
    for i, (n_in, n_out) in enumerate(pairwise(sizes)):
        w = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)
        b = np.zeros(n_out, dtype=np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes.append(helper.make_node("Gemm", [prev, f"w{i}", f"b{i}"], [f"h{i}"]))
        prev = f"h{i}"
        if i < len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [prev], [f"r{i}"]))
            prev = f"r{i}"
    nodes[-1].output[0] = "logits"
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", sizes[0]])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", sizes[-1]])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def parameter_count(sizes: list[int]) -> int:
    return sum(a * b + b for a, b in pairwise(sizes))


def classification_parquet(path: Path, n: int, n_features: int, n_classes: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, n_features)).astype(np.float32)
    y = rng.integers(0, n_classes, n)
    column = pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), n_features)
    pq.write_table(pa.table({"x": column, "label": y}), str(path))
    return path


def zipf_word_pairs(rng: random.Random, n: int) -> Iterator[tuple[list[str], list[str]]]:
    """``n`` (prediction, reference) word lists for the text-overlap benches: references of 8-40 words drawn
    from a Zipf-weighted vocabulary of 20,000 made-up words (10% capitalized), predictions keeping 70% of the
    reference's words and shuffled 30% of the time. ``rng`` is the caller's, which may draw between pairs."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 9))) for _ in range(20000)]
    cum = list(accumulate(1.0 / (i + 1) for i in range(len(vocab))))  # Zipf weights
    for _ in range(n):
        words = rng.choices(vocab, cum_weights=cum, k=rng.randint(8, 40))
        ref = [w.capitalize() if rng.random() < 0.1 else w for w in words]
        pred = [w if rng.random() < 0.7 else rng.choices(vocab, cum_weights=cum)[0] for w in words]
        if rng.random() < 0.3:
            rng.shuffle(pred)
        yield pred, ref
