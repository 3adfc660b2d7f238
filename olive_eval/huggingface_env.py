"""The Hugging Face libraries' environment: the cache folders, the offline switches and quiet logging.

Its own concept: the runtimes (``runtimes/hf.py``), the tokenizer and processor loader and the datasets all
load through ``transformers``, ``datasets`` or ``huggingface_hub`` under the same rules (nothing reaches the
network unless the run allows it; the libraries' warnings and progress bars stay off a run's output).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

#: The run's download policy while a model loads (see :func:`download_policy`); never by default.
_DOWNLOADS: ContextVar[bool] = ContextVar("olive_eval_downloads", default=False)


@contextmanager
def download_policy(allowed: bool) -> Iterator[None]:
    """Whether models loaded in the block may be downloaded: the run's context sets it where it creates a
    runtime, so the policy reaches a runtime's ``load`` without a field on the model's config."""
    token = _DOWNLOADS.set(allowed)
    try:
        yield
    finally:
        _DOWNLOADS.reset(token)


def downloads_allowed() -> bool:
    return _DOWNLOADS.get()


def hf_cache_root() -> Path:
    return Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))


def hub_dataset_cached(name: str) -> bool:
    """Whether a hub dataset has files in the local cache (the hub cache, or ``datasets``' own)."""
    hub = Path(os.environ.get("HF_HUB_CACHE", hf_cache_root() / "hub")) / f"datasets--{name.replace('/', '--')}"
    prepared = Path(os.environ.get("HF_DATASETS_CACHE", hf_cache_root() / "datasets")) / name.replace("/", "___")
    return hub.is_dir() or prepared.is_dir()


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """transformers logs warnings (e.g. about unused weights) and draws a "Loading weights" bar on stderr; a run
    reports through its own lines, so both are off for the block (and restored after it)."""
    import transformers
    from transformers.utils import logging as hf_logging

    level, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    transformers.logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        transformers.logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


@contextmanager
def offline(allowed: bool) -> Iterator[None]:
    """Hugging Face libraries read their offline switches at import time and from these modules' globals;
    set both for the block (nothing reaches the network unless the run allows it)."""
    if allowed:
        yield
        return
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    os.environ.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    patched = []
    for module, attr in (("huggingface_hub.constants", "HF_HUB_OFFLINE"), ("datasets.config", "HF_HUB_OFFLINE")):
        mod = sys.modules.get(module)
        if mod is not None and hasattr(mod, attr):
            patched.append((mod, attr, getattr(mod, attr)))
            setattr(mod, attr, True)
    try:
        yield
    finally:
        for mod, attr, value in patched:
            setattr(mod, attr, value)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
