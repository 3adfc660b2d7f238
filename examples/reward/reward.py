"""A stand-in reward model for the example: ``reward(prompts, responses) -> [float]``, called with whole batches.

It rewards a response for staying on the question's topic (up to two of its words) and for adding words of its
own (up to three), takes 3 off for echoing the question and a little for length, so that the example runs
anywhere with nothing to download.
Replace it with a real reward model: ``{"type": "classifier", "model": {"type": "HfModel", "model_path":
"<folder>", "task": "text-classification"}}`` (see docs/judged.md), or keep a function and call your own.
"""

from __future__ import annotations

import re


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def score(prompt: str, response: str) -> float:
    """One pair's reward: on topic (at most 2) plus new content words (at most 3), less echo and length."""
    asked, said = _words(prompt), _words(response)
    echo = 3.0 if prompt.strip().lower() in response.lower() else 0.0
    return min(len(asked & said), 2) + min(len(said - asked), 3) - echo - 0.05 * len(response.split())


def reward(prompts: list[str], responses: list[str]) -> list[float]:
    return [score(p, r) for p, r in zip(prompts, responses, strict=True)]
