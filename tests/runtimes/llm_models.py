"""A tiny Llama built offline: random weights from a config, a byte-level BPE tokenizer trained here, and its
ONNX Runtime GenAI exports (``onnxruntime_genai.models.builder``, fp32 and int4 for the cpu).

GenAI's tokenizer reads a byte-level BPE ``tokenizer.json`` (not a WordLevel one), so the tokenizer is trained
with ``tokenizers`` on generated sentences. Everything is deterministic for a given seed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

from tests.helpers import write_jsonl
from tests.runtimes import hf_models

#: Context of the tiny model (``max_position_embeddings``): a longer prompt does not fit.
CONTEXT = 128


def sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` random sentences of 3 to 9 words (the text models' words): the training text and the prompts."""
    return hf_models.sentences(n, seed, min_words=3, max_words=9)


def prompts_data_config(
    path: Path, prompts: list[str], answers: list[str] | None = None, batch_size: int = 2
) -> dict[str, Any]:
    """Data config ``gen``: ``prompts`` written to ``path`` (with ``answers``, else "x"), tokenized by the text
    generation pre-process, the generated tokens decoded."""
    answers = answers if answers is not None else ["x"] * len(prompts)
    data = write_jsonl(path, [{"text": p, "answer": a} for p, a in zip(prompts, answers, strict=True)])
    return {
        "name": "gen",
        "load_dataset_config": {"data_name": "json", "data_files": str(data)},
        "pre_process_data_config": {
            "type": "text_generation_huggingface_pre_process",
            "input_cols": ["text"],
            "label_col": "answer",
        },
        "post_process_data_config": {"type": "decode"},
        "dataloader_config": {"batch_size": batch_size},
    }


def _tokenizer(folder: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # the alphabet is the training text's own characters, not all 256 bytes: every token decodes to printable text
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>", "</s>", "<pad>"])
    tok.train_from_iterator(sentences(2000), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    fast.save_pretrained(folder)


def build_tiny_llama(folder: Path, seed: int = 0, hidden_size: int = 64, layers: int = 2) -> Path:
    """A ``LlamaForCausalLM`` (2 layers, hidden size 64 by default) with random weights and its tokenizer, saved
    in ``folder``."""
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    _tokenizer(folder)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=CONTEXT,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    return folder


def export_genai(hf_folder: Path, out: Path, precision: str = "fp32") -> Path:
    """The GenAI export of a transformers folder (``-p fp32`` or ``int4``, ``-e cpu``): a folder with
    ``genai_config.json``, ``model.onnx`` and the tokenizer."""
    command = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf_folder), "-o", str(out)]
    command += ["-p", precision, "-e", "cpu", "-c", str(out.parent / f"cache-{precision}")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (out / "genai_config.json").is_file():
        raise RuntimeError(f"the GenAI builder failed ({done.returncode}): {done.stderr[-2000:]}")
    return out
