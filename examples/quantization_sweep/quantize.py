"""The quantization options of the sweep: int8 copies of the MiniLM ONNX export made with onnxruntime's quantizer.

The source is the fp32 export of the MiniLM example (``examples/minilm/models/minilm_fp32.onnx``, built
offline by ``examples/minilm/make_models.py``). Each option is one call of ``onnxruntime.quantization``::

    python examples/quantization_sweep/quantize.py            # build every option into models/ (16-30 s on a busy 2-core machine)
    python examples/quantization_sweep/quantize.py --only int8_dynamic_per_channel

The static options calibrate on the sentences of the pair set's first CALIBRATION_PAIRS pairs (300
sentences; the labels are not read). Options that quantize the same operator types share one calibration
run through onnxruntime's calibration cache, kept in a temporary folder for one build.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "minilm"))
import make_models as minilm  # noqa: E402  (the MiniLM example's export, tokenizer and pair set)

MODEL_DIR = HERE / "models"
CALIBRATION_PAIRS = 150  # both sentences of each: 300 calibration sentences
CALIBRATION_BATCH = 32


@dataclass(frozen=True)
class Option:
    """One quantization setting: ``static`` options need calibration data; ``kwargs`` go to onnxruntime."""

    name: str
    what: str
    static: bool
    kwargs: dict[str, Any] = field(default_factory=dict)


OPTIONS: tuple[Option, ...] = (
    Option(
        "int8_dynamic_per_tensor",
        "quantize_dynamic, int8 weights, one scale per tensor",
        static=False,
        kwargs={"weight_type": QuantType.QInt8, "per_channel": False},
    ),
    Option(
        "int8_dynamic_per_channel",
        "quantize_dynamic, int8 weights, one scale per output channel",
        static=False,
        kwargs={"weight_type": QuantType.QInt8, "per_channel": True},
    ),
    Option(
        "int8_qdq_static",
        "quantize_static, QDQ format, MatMul only, int8 activations and per-channel weights, MinMax calibration",
        static=True,
        kwargs={"quant_format": QuantFormat.QDQ, "per_channel": True, "op_types_to_quantize": ["MatMul"]},
    ),
    Option(
        "int8_qoperator_static",
        "quantize_static, QOperator format (QLinearMatMul), MatMul only, uint8 activations, per-channel weights",
        static=True,
        kwargs={
            "quant_format": QuantFormat.QOperator,
            "per_channel": True,
            "activation_type": QuantType.QUInt8,
            "op_types_to_quantize": ["MatMul"],
        },
    ),
    Option(
        "int8_qdq_static_all_ops",
        "quantize_static with its defaults: QDQ on every supported op (Add, LayerNorm, Softmax, Gather...)",
        static=True,
        kwargs={"quant_format": QuantFormat.QDQ, "per_channel": True},
    ),
)


def calibration_sentences(rows: Sequence[dict[str, object]]) -> list[str]:
    """Both sentences of the first CALIBRATION_PAIRS pairs, in file order."""
    return [str(row[key]) for row in rows[:CALIBRATION_PAIRS] for key in ("sentence1", "sentence2")]


class SentenceReader(CalibrationDataReader):
    """Feeds the fp32 graph the calibration sentences, CALIBRATION_BATCH at a time, tokenized as in the example."""

    def __init__(self, tokenizer: Any, sentences: Sequence[str]) -> None:
        self._batches: Iterator[dict[str, np.ndarray]] = (
            minilm.tokenize(tokenizer, sentences[start : start + CALIBRATION_BATCH])
            for start in range(0, len(sentences), CALIBRATION_BATCH)
        )

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._batches, None)


def build(
    option: Option,
    target: Path,
    *,
    tokenizer: Any,
    sentences: Sequence[str],
    cache_dir: Path,
    source: Path | None = None,
) -> Path:
    """Write ``option``'s int8 copy of ``source`` (default: the MiniLM fp32 export) to ``target``; return it.

    Static options calibrate on ``sentences``, or reuse the ranges cached in ``cache_dir`` by an earlier
    option that quantized the same operator types.
    """
    source = minilm.FP32_ONNX if source is None else source
    if not source.is_file():
        raise SystemExit(f"{source} does not exist: run `python examples/minilm/make_models.py --no-bench` first")
    target.parent.mkdir(parents=True, exist_ok=True)
    # the quantizer logs a hint to run quant_pre_process first (on the root logger); the MiniLM example measured it
    # and left it out: quiet while it runs, the caller's level back after
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        if option.static:
            ops = option.kwargs.get("op_types_to_quantize") or ["all"]
            cache = cache_dir / f"calibration-{'-'.join(ops)}.json"
            reader = None if cache.is_file() else SentenceReader(tokenizer, sentences)
            quantize_static(source, target, reader, calibration_cache_path=cache, **option.kwargs)
        else:
            quantize_dynamic(source, target, **option.kwargs)
    finally:
        root.setLevel(level)
    onnx.checker.check_model(str(target))
    return target


def build_all(options: Sequence[Option], model_dir: Path = MODEL_DIR) -> dict[str, Path]:
    """Build ``options`` into ``model_dir`` (``<name>.onnx``), printing each file's size and build time."""
    tokenizer = minilm.load_tokenizer()
    sentences = calibration_sentences(minilm.load_pairs())
    paths = {}
    with tempfile.TemporaryDirectory(prefix="calibration-") as cache_dir:
        for option in options:
            start = time.perf_counter()
            path = build(
                option,
                model_dir / f"{option.name}.onnx",
                tokenizer=tokenizer,
                sentences=sentences,
                cache_dir=Path(cache_dir),
            )
            print(
                f"{option.name}: {path.stat().st_size:,} bytes in {time.perf_counter() - start:.1f} s ({option.what})"
            )
            paths[option.name] = path
    return paths


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=[o.name for o in OPTIONS], help="build only these options")
    options = parser.parse_args(argv)
    build_all([o for o in OPTIONS if options.only is None or o.name in options.only])


if __name__ == "__main__":
    main()
