"""A judge for olive-eval's judged metrics: an OpenAI-compatible chat-completions endpoint (a vLLM or llama.cpp
server, Ollama, a hosted API), called with the standard library only.

The batch form ``judge_batch(prompts) -> [str]`` is registered as the judge ``endpoint``: config.json imports this
script as its metric's ``user_config.user_script`` (a path relative to the config) and names the judge with
``"judge": {"function": "endpoint"}``; olive-eval calls it once per step of a metric with every prompt not yet
cached, and it sends them on a few threads. (``{"function": "judge", "user_script": PATH}`` names the one-prompt
form instead, by path.) The
metric parses each reply strictly as JSON: a reply that is not is counted and left out, never scored 0, and an
exception raised here fails that example only. Settings come from the environment so that the config (and the
results.json that records it) holds no secret:

* ``JUDGE_BASE_URL``: the server's ``/v1`` URL (default ``http://localhost:8000/v1``);
* ``JUDGE_MODEL``: the model name the server knows;
* ``JUDGE_API_KEY``: a bearer token, if the server wants one (never written anywhere by olive-eval).
"""

from __future__ import annotations

import json
import os
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from olive_eval.judges import register_judge

BASE_URL = os.environ.get("JUDGE_BASE_URL", "http://localhost:8000/v1").rstrip("/")
MODEL = os.environ.get("JUDGE_MODEL", "judge-model")
THREADS = 8


def judge(prompt: str, temperature: float = 0.0, max_tokens: int = 512, timeout: float = 60.0) -> str:
    """One chat completion; the reply's text. ``temperature`` 0 keeps the verdicts as repeatable as the server is."""
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": prompt}],
        "temperature": temperature,
        "max_tokens": max_tokens,
        # Servers that support it return valid JSON only; the others ignore or reject the key (then drop it).
        "response_format": {"type": "json_object"},
    }
    headers = {"Content-Type": "application/json"}
    key = os.environ.get("JUDGE_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(
        f"{BASE_URL}/chat/completions", data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:  # an HTTP error raises: that example fails
        reply = json.load(response)
    return reply["choices"][0]["message"]["content"] or ""


@register_judge("endpoint", batched=True)
def judge_batch(prompts: list[str], **kwargs: float) -> list[str | Exception]:
    """The prompts on ``THREADS`` threads; a prompt whose request failed gets its exception in place of the reply
    (olive-eval fails that example alone, with the exception's message)."""

    def one(prompt: str) -> str | Exception:
        try:
            return judge(prompt, **kwargs)
        except OSError as exc:
            return exc

    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(one, prompts))
