"""What the data and the checkers were, for results.json: the seed's ``split@version`` and ``checker@version|model``.

A number means little without the data it was measured on and the thing measured: two runs on "documents.jsonl"
compare only if it held the same bytes. So each data config is recorded with its ``version`` (the user's label)
and the sha256 of every local file or folder its dataset reads (a folder: over its files' relative names and
hashes, as the result cache hashes it); each model (the checker, in the seed's words) with its ``version`` and
the sha256 of the code it runs (user scripts). Model weights are not hashed here: reading gigabytes at every
run's start is the result cache's cost to pay (``--cache``), and their paths are in the recorded config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from olive_eval.config.data import DataConfig
from olive_eval.engine.cache.content_hash import tree_sha256
from olive_eval.runtimes.base import ModelConfig

__all__ = ["checker_identity", "data_paths", "dataset_identity", "datasets_identity"]


#: Keys whose relative values are paths too (Olive reads them against the working directory, as ``data_dir``).
PATH_KEY_ENDINGS = ("_dir", "_file", "_files", "_path")


def named_paths(value: Any, key: str = "") -> set[Path]:
    """The existing files and folders a JSON value names: absolute paths (the run config's relative ``data_files``
    and ``data_name`` are absolute by now), and relative ones under a path-like key, against the working directory."""
    if isinstance(value, dict):
        return set().union(*(named_paths(v, str(k)) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(*(named_paths(v, key) for v in value))
    if not isinstance(value, str) or not value or "://" in value:
        return set()
    path = Path(value)
    if not path.is_absolute() and not key.endswith(PATH_KEY_ENDINGS):
        return set()  # a name ("json", a split): not a path, even if the working directory holds one so named
    try:
        return {path.resolve()} if path.exists() else set()
    except (OSError, ValueError):  # a name too long for a path, a NUL byte: not a path
        return set()


def data_paths(data_config: DataConfig) -> list[Path]:
    """The local files and folders the data config reads: those its dataset component names (``data_files``, a
    local ``data_name`` folder, ``data_dir``...) and its ``user_script``, which can make the data."""
    paths = named_paths(data_config.load_dataset_config.model_dump(mode="json"))
    if data_config.user_script is not None and Path(data_config.user_script).is_file():
        paths.add(Path(data_config.user_script).resolve())
    return sorted(paths, key=str)


def dataset_identity(data_config: DataConfig) -> dict[str, Any]:
    """``{"version": ..., "files": {path: sha256}}``; no files for a hub dataset or dummy data."""
    return {"version": data_config.version, "files": {str(p): tree_sha256(p) for p in data_paths(data_config)}}


def datasets_identity(data_configs: list[DataConfig]) -> dict[str, dict[str, Any]]:
    return {dc.name: dataset_identity(dc) for dc in data_configs}


def checker_identity(model: ModelConfig) -> dict[str, Any]:
    """``{"type", "version", "code": {script: sha256}}`` of one model: what checked, as far as its config says."""
    scripts = sorted({script for _, script, _, _ in model.user_functions() if Path(script).is_file()}, key=str)
    return {
        "type": model.type,
        "version": model.version,
        "code": {str(Path(s).resolve()): tree_sha256(Path(s)) for s in scripts},
    }
