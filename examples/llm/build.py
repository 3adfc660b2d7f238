"""Build the LLM example: a tiny Llama trained on CPU to copy digit strings, and its ONNX Runtime GenAI exports.

The task has checkable answers (``"40271>"`` → ``"40271"``, strings of 3 to 7 digits never seen in training),
so a candidate's loss of quality is real and not noise; a minute on two cores teaches it. Everything is made
here, nothing is downloaded::

    python examples/llm/build.py           # data/, then models/hf (trained), models/genai_fp32, models/genai_int4

Outputs (``models/`` is git-ignored; ``data/`` is rebuilt identically from the seed):

* ``data/copy_test.jsonl``: 200 held-out strings, ``{"prompt": "40271>", "answer": "40271"}`` per line.
* ``models/hf``: the trained ``LlamaForCausalLM`` and its tokenizer (byte-level BPE without merges: one token per
  character, which onnxruntime-genai's tokenizer reads).
* ``models/genai_fp32``, ``models/genai_int4``: ``python -m onnxruntime_genai.models.builder`` exports.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "copy_test.jsonl"
MODELS = HERE / "models"
SEED = 0
ALPHABET = "0123456789>"
TEST_SIZE = 200


def strings(n: int, seed: int) -> list[str]:
    """``n`` distinct digit strings of 3 to 7 digits."""
    rng, seen = random.Random(seed), {}
    while len(seen) < n:
        seen.setdefault("".join(rng.choice("0123456789") for _ in range(rng.randint(3, 7))), None)
    return list(seen)  # in the order drawn: the same on every run


def example(digits: str) -> tuple[str, str]:
    return f"{digits}>", digits


def write_test_set(test: list[str]) -> None:
    DATA.parent.mkdir(parents=True, exist_ok=True)
    rows = [dict(zip(("prompt", "answer"), example(digits), strict=True)) for digits in test]
    DATA.write_text("".join(json.dumps(row) + "\n" for row in rows))


def build_tokenizer(folder: Path) -> object:
    """A byte-level BPE with no merges: one token per character of the task's alphabet, plus the specials."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=len(ALPHABET) + 3, special_tokens=["<s>", "</s>", "<pad>"])
    tok.train_from_iterator([ALPHABET] * 10, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    fast.save_pretrained(folder)
    return fast


def train(folder: Path, train_strings: list[str], seconds: float) -> dict[str, float]:
    """Train a 2-layer Llama on ``prompt + answer + </s>`` (loss on the answer only) for ``seconds``."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = build_tokenizer(folder)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=32,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(config)
    encoded = []
    for digits in train_strings:
        prompt, answer = example(digits)
        ids = tokenizer(prompt + answer, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        encoded.append((ids, len(tokenizer(prompt, add_special_tokens=False)["input_ids"])))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    rng = random.Random(SEED)
    started, steps, loss = time.perf_counter(), 0, torch.tensor(0.0)
    model.train()
    while time.perf_counter() - started < seconds:
        batch = rng.sample(encoded, 32)
        width = max(len(ids) for ids, _ in batch)
        input_ids = torch.full((len(batch), width), tokenizer.pad_token_id)
        labels = torch.full((len(batch), width), -100)
        for row, (ids, prompt_len) in enumerate(batch):
            input_ids[row, : len(ids)] = torch.tensor(ids)
            labels[row, prompt_len : len(ids)] = torch.tensor(ids[prompt_len:])
        loss = model(input_ids=input_ids, attention_mask=(input_ids != tokenizer.pad_token_id), labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += 1
    model.eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    return {"steps": steps, "seconds": round(time.perf_counter() - started, 1), "last_loss": round(loss.item(), 4)}


def export_genai(hf_folder: Path, out: Path, precision: str) -> None:
    if out.exists():
        shutil.rmtree(out)
    command = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf_folder), "-o", str(out)]
    command += ["-p", precision, "-e", "cpu", "-c", str(MODELS / f"cache-{precision}")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (out / "genai_config.json").is_file():
        sys.exit(f"build.py: the GenAI builder failed for {precision}: {done.stderr.strip().splitlines()[-1:]}")
    shutil.rmtree(MODELS / f"cache-{precision}", ignore_errors=True)


def held_out_accuracy(folder: Path, test: list[str]) -> float:
    """Greedy exact match of the trained model on held-out strings (a check of the build, printed)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    right = 0
    with torch.inference_mode():
        for digits in test:
            prompt, answer = example(digits)
            ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
            out = model.generate(**ids, max_new_tokens=8, do_sample=False)
            text = tokenizer.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
            right += text == answer
    return right / len(test)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="training time (default 60 s)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # a model this small trains faster on one thread than on two
    every = strings(20_000 + TEST_SIZE, SEED)
    test, train_strings = every[:TEST_SIZE], every[TEST_SIZE:]
    write_test_set(test)
    hf = MODELS / "hf"
    hf.mkdir(parents=True, exist_ok=True)
    stats = train(hf, train_strings, args.seconds)
    print(f"trained: {stats['steps']} steps in {stats['seconds']} s, last loss {stats['last_loss']}")
    print(f"held-out greedy exact match: {held_out_accuracy(hf, test[:100]):.2f} (the first 100 test strings)")
    for precision in ("fp32", "int4"):
        export_genai(hf, MODELS / f"genai_{precision}", precision)
        print(f"exported {MODELS / f'genai_{precision}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
