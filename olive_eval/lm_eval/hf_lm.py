"""lm-eval's ``HFLM`` around a transformers model olive-eval loaded (its device and dtype), with the tokenizer
from the model's folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lm_eval.models.huggingface import HFLM

from olive_eval.huggingface_env import downloads_allowed, offline, quiet_transformers
from olive_eval.lm_eval.options import AdapterOptions


def hf_lm(model: Any, source: str | Path, device: Any, options: AdapterOptions) -> Any:
    from transformers import AutoTokenizer

    with offline(downloads_allowed()), quiet_transformers():
        tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=not downloads_allowed())
    kwargs: dict[str, Any] = {"max_length": options.max_length} if options.max_length else {}
    return HFLM(pretrained=model, tokenizer=tokenizer, batch_size=options.batch_size, device=str(device), **kwargs)
