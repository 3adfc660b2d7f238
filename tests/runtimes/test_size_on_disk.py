"""size_on_disk measures a model's own files: not the script that builds it, and nothing when there are none."""

from __future__ import annotations

import math
import os
from pathlib import Path

from olive_eval.metrics.types import SizeOnDiskType
from olive_eval.runtimes.hf_config import HfModelConfig
from olive_eval.runtimes.torch_config import PyTorchModelConfig
from tests.runtimes.hf_models import build_bert


def bytes_below(folder: Path) -> int:
    return sum(os.path.getsize(Path(root) / name) for root, _, names in os.walk(folder) for name in names)


def test_a_pytorch_model_is_its_model_path_not_its_model_script(tmp_path: Path) -> None:
    weights, script = tmp_path / "weights.bin", tmp_path / "loader.py"
    weights.write_bytes(b"\0" * 4321)
    script.write_text("def load(model_path):\n    raise AssertionError('not called to measure a size')\n" * 50)
    config = PyTorchModelConfig.model_validate(
        {"type": "PyTorchModel", "model_path": str(weights), "model_loader": "load", "model_script": str(script)}
    )
    size = SizeOnDiskType().score_model(config)
    assert (size.value, size.undefined) == (4321.0, None)


def test_a_pytorch_model_built_by_code_alone_has_an_undefined_size(tmp_path: Path) -> None:
    script = tmp_path / "loader.py"
    script.write_text("def load(model_path):\n    return None\n")
    config = PyTorchModelConfig.model_validate(
        {"type": "PyTorchModel", "model_loader": "load", "model_script": str(script)}
    )
    size = SizeOnDiskType().score_model(config)
    assert math.isnan(size.value)
    assert size.undefined == "a PyTorchModel built by its model_loader without model_path has no files to measure"


def test_a_transformers_folder_counts_every_file_and_an_unknown_name_is_undefined(tmp_path: Path) -> None:
    folder = build_bert(tmp_path / "bert")
    local = HfModelConfig.model_validate({"type": "HfModel", "model_path": str(folder), "task": "text-classification"})
    assert SizeOnDiskType().score_model(local).value == bytes_below(folder) > 0
    missing = HfModelConfig.model_validate(
        {"type": "HfModel", "model_path": "nobody/not-cached-anywhere", "task": "text-classification"}
    )
    size = SizeOnDiskType().score_model(missing)
    assert math.isnan(size.value)
    assert size.undefined == (
        "'nobody/not-cached-anywhere' is neither a local folder nor in the Hugging Face cache, so there is nothing to measure"
    )
