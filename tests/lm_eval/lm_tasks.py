"""Three local lm-eval tasks written for the tests, over the tiny Llama's words (its tokenizer knows no digits):

* ``words_mc``: multiple choice by loglikelihood (``acc``, ``acc_norm``);
* ``words_gen``: generate_until with two regex filters, ``strict-match`` (the first two words) and
  ``flexible-extract`` (the last word); the answers are built from the model's own greedy text so each filter
  matches on a different share of the documents;
* ``words_ppl``: loglikelihood_rolling (``word_perplexity``, ``byte_perplexity``, ``bits_per_byte``).

Each task's YAML reads a JSON lines file beside it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from tests.helpers import write_jsonl
from tests.runtimes import hf_models

TASKS = ("words_mc", "words_gen", "words_ppl")

MC_YAML = """task: words_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: words_mc.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "{{context}}"
doc_to_choice: "{{choices}}"
doc_to_target: "{{answer}}"
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""

GEN_YAML = """task: words_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: words_gen.jsonl
test_split: test
output_type: generate_until
doc_to_text: "{{prompt}}"
doc_to_target: "{{answer}}"
generation_kwargs:
  until: ["\\n"]
  do_sample: false
  max_gen_toks: 6
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: "^\\\\s*(\\\\S+ \\\\S+)"
      - function: take_first
  - name: flexible-extract
    filter:
      - function: regex
        group_select: -1
        regex_pattern: "(\\\\S+)"
      - function: take_first
metadata:
  version: 2.0
"""

PPL_YAML = """task: words_ppl
dataset_path: json
dataset_kwargs:
  data_files:
    test: words_ppl.jsonl
test_split: test
output_type: loglikelihood_rolling
doc_to_text: ""
doc_to_target: "{{text}}"
metric_list:
  - metric: word_perplexity
  - metric: byte_perplexity
  - metric: bits_per_byte
metadata:
  version: 1.0
"""

#: The two filters of ``words_gen``, as Python regexes (what the test computes independently).
STRICT = re.compile(r"^\s*(\S+ \S+)")
FLEXIBLE = re.compile(r"(\S+)")


def mc_rows(n: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    rows = []
    for context in hf_models.sentences(n, seed, min_words=3, max_words=7):
        choices = [str(w) for w in rng.choice(hf_models.WORDS, size=4, replace=False)]
        rows.append({"context": context, "choices": choices, "answer": int(rng.integers(4))})
    return rows


def write_tasks(folder: Path, gen_answers: list[str], n: int = 24, seed: int = 0, relative: bool = False) -> Path:
    """The three tasks in ``folder``; ``words_gen``'s answers are ``gen_answers`` (one per prompt of
    :func:`gen_prompts`). Their ``data_files`` are absolute paths, or, ``relative``, file names beside the YAML
    (which lm-eval alone reads from the working directory)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("words_mc", MC_YAML), ("words_gen", GEN_YAML), ("words_ppl", PPL_YAML)):
        data = f"{name}.jsonl" if relative else str(folder / f"{name}.jsonl")
        (folder / f"{name}.yaml").write_text(text.replace(f"test: {name}.jsonl", f"test: {data}"))
    write_jsonl(folder / "words_mc.jsonl", mc_rows(n, seed))
    prompts = gen_prompts(len(gen_answers), seed)
    write_jsonl(
        folder / "words_gen.jsonl", [{"prompt": p, "answer": a} for p, a in zip(prompts, gen_answers, strict=True)]
    )
    texts = hf_models.sentences(n, seed + 1, min_words=6, max_words=12)
    write_jsonl(folder / "words_ppl.jsonl", [{"text": t} for t in texts])
    return folder


def gen_prompts(n: int, seed: int = 0) -> list[str]:
    return hf_models.sentences(n, seed + 2, min_words=2, max_words=5)


def answers_from(generations: list[str]) -> list[str]:
    """Answers that the strict filter matches on every 2nd document and the flexible one on every 3rd, from the
    model's own greedy ``generations`` (cut at a newline)."""
    answers = []
    for i, text in enumerate(generations):
        strict, words = STRICT.findall(text), FLEXIBLE.findall(text)
        if i % 2 == 0 and strict:
            answers.append(strict[0])
        elif i % 3 == 0 and words:
            answers.append(words[-1])
        else:
            answers.append("never generated")
    return answers
