"""Reward functions for the tests, ``(prompts, responses) -> [score]``, each logging the calls it gets."""

from __future__ import annotations

CALLS: list[tuple[list[str], list[str]]] = []


def overlap(prompt: str, response: str) -> float:
    """Words the response shares with the prompt, less a tenth per word of the response."""
    return len(set(prompt.split()) & set(response.split())) - 0.1 * len(response.split())


def reward(prompts: list[str], responses: list[str], scale: float = 1.0) -> list[float]:
    CALLS.append((list(prompts), list(responses)))
    return [scale * overlap(p, r) for p, r in zip(prompts, responses, strict=True)]


def picky(prompts: list[str], responses: list[str]) -> list[object]:
    """Text for 'text', NaN for 'nan', an exception for 'oops', and True for 'bool': each fails its pair."""
    out: list[object] = []
    for p, r in zip(prompts, responses, strict=True):
        special = {"text": "high", "nan": float("nan"), "oops": ValueError("cannot score 'oops'"), "bool": True}
        out.append(special.get(r, overlap(p, r)))
    return out


def broken(prompts: list[str], responses: list[str]) -> list[float]:
    raise RuntimeError("the reward model is down")


def short(prompts: list[str], responses: list[str]) -> list[float]:
    return [1.0]
