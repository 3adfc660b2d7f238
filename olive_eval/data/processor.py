"""Tokenizers and processors, loaded once per folder from local files (or the local Hugging Face cache).

Pre-processing tokenizes with them, post-processing decodes with them; a model names its folder
(``HfModel.model_path``, ``ONNXModel.processor_path``) and a pre-process may name one (``model_name``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from olive_eval.errors import EvaluationError, MissingDependencyError
from olive_eval.huggingface_env import offline, quiet_transformers

_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "preprocessor_config.json", "processor_config.json")


def load_processor(name_or_path: str | Path, *, allow_download: bool = False, trust_remote_code: bool = False) -> Any:
    """A transformers processor (``AutoProcessor``), or the tokenizer when the folder has only that."""
    return _load(str(name_or_path), allow_download, trust_remote_code)


@functools.lru_cache(maxsize=16)
def _load(name: str, allow_download: bool, trust_remote_code: bool) -> Any:
    try:
        import transformers
    except ImportError as exc:
        raise MissingDependencyError("transformers", "tokenizing or decoding with a model's processor") from exc
    folder = Path(name)
    if folder.is_dir() and not any((folder / f).is_file() for f in _FILES):
        raise EvaluationError(
            f"no tokenizer or processor in {folder} (none of {', '.join(_FILES)}); give the model's processor "
            "folder with processor_path, or pre_process_data_config.model_name"
        )
    kwargs = {"local_files_only": not allow_download, "trust_remote_code": trust_remote_code}
    with offline(allow_download), quiet_transformers():
        errors = []
        for auto in (transformers.AutoProcessor, transformers.AutoTokenizer):
            try:
                return auto.from_pretrained(name, **kwargs)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                errors.append(f"{auto.__name__}: {_first_line(exc)}")
    where = "the folder" if folder.is_dir() else "the local Hugging Face cache"
    hint = "" if folder.is_dir() or allow_download else ' (allow downloads with "allow_download": true)'
    raise EvaluationError(f"cannot load a tokenizer or processor for '{name}' from {where}{hint}: {errors[-1]}")


def tokenizer_of(processor: Any) -> Any:
    """The tokenizer inside a multimodal processor, or the processor itself when it is one."""
    return getattr(processor, "tokenizer", None) or processor


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
