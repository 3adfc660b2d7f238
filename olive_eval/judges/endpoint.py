"""A scoring judge behind HTTP: each batch of (prompt, response) pairs posted as JSON, one score per pair back.

Two shapes of request (``api``):

- ``score``: the Score API of OpenAI-compatible servers (vLLM's ``POST <url>/score``): ``{"model", "text_1":
  [prompts], "text_2": [responses]}``, the scores read from ``data[i].score`` in ``index`` order;
- ``plain``: ``POST <url>`` with ``{"prompts": [...], "responses": [...]}``, answered ``{"scores": [...]}`` (a
  ``null`` score fails its pair alone).

A request that fails (an HTTP error, no answer, a reply of another shape) fails the pairs it carried, with one line
naming the endpoint; the other batches go on. The key, if any, is read from the environment variable the spec
names, never from the config. The standard library only: nothing to install.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from olive_eval.judges.base import BatchCall, JudgeModel, JudgeSource, JudgeSpec, OneCall, judge_source_registry

__all__ = ["EndpointJudgeSpec", "EndpointReplyError"]


class EndpointReplyError(RuntimeError):
    """The endpoint refused a batch or answered something that is not its scores: one line naming it."""


class EndpointJudgeSpec(JudgeSpec):
    """``{"type": "endpoint", "url": "http://host:8000", "api": "score", "model": NAME}``."""

    url: str = Field(description="The server's base URL (api score: /score is added) or the scoring URL (plain)")
    api: Literal["score", "plain"] = Field("score", description="The request's shape (see docs/judged.md)")
    model: str | None = Field(None, description="The model name the server serves (api score)")
    api_key_env: str | None = Field(None, description="The environment variable holding a bearer key, if any")
    batch_size: int = Field(32, ge=1, description="Pairs per request")
    request_timeout: float = Field(60.0, gt=0, description="Seconds one request may take")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"expected an http:// or https:// URL, got {value!r}")
        return value


def _post(target: str, body: dict[str, Any], spec: EndpointJudgeSpec) -> Any:
    headers = {"Content-Type": "application/json"}
    if spec.api_key_env:
        key = os.environ.get(spec.api_key_env)
        if not key:
            raise EndpointReplyError(f"endpoint {target}: environment variable {spec.api_key_env} is not set")
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(target, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=spec.request_timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise EndpointReplyError(f"endpoint {target}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise EndpointReplyError(f"endpoint {target}: {getattr(exc, 'reason', exc)}") from None
    except ValueError:
        raise EndpointReplyError(f"endpoint {target}: the reply is not JSON") from None


def scores_of(reply: Any, api: str, count: int, target: str) -> list[Any]:
    """The scores in a reply, one per pair (an error in place of a null score), or why the reply has none."""
    try:
        if api == "score":
            scores = [row["score"] for row in sorted(reply["data"], key=lambda row: row["index"])]
        else:
            scores = list(reply["scores"])
    except (KeyError, TypeError):
        shape = "data[i].score" if api == "score" else '"scores"'
        raise EndpointReplyError(f"endpoint {target}: the reply has no {shape}") from None
    if len(scores) != count:
        raise EndpointReplyError(f"endpoint {target}: {len(scores)} scores for {count} pairs")
    missing = EndpointReplyError(f"endpoint {target}: no score for this pair")
    return [missing if s is None else s for s in scores]


class EndpointSource(JudgeSource):
    Spec: ClassVar[type[JudgeSpec]] = EndpointJudgeSpec
    gives: ClassVar[tuple[str, ...]] = ("score",)

    @classmethod
    def build(
        cls, spec: JudgeSpec, model: JudgeModel | None = None, runtime: Any = None
    ) -> tuple[BatchCall | OneCall, bool, dict[str, Any]]:
        assert isinstance(spec, EndpointJudgeSpec)
        target = spec.url.rstrip("/") + "/score" if spec.api == "score" else spec.url

        def post(pairs: list[Any]) -> list[Any]:
            prompts, responses = [p for p, _ in pairs], [r for _, r in pairs]
            if spec.api == "score":
                body: dict[str, Any] = {"text_1": prompts, "text_2": responses}
                if spec.model is not None:
                    body["model"] = spec.model
            else:
                body = {"prompts": prompts, "responses": responses}
            return scores_of(_post(target, body, spec), spec.api, len(pairs), target)

        def score(pairs: list[Any]) -> list[Any]:
            out: list[Any] = []
            for start in range(0, len(pairs), spec.batch_size):
                chunk = pairs[start : start + spec.batch_size]
                try:
                    out.extend(post(chunk))
                except EndpointReplyError as exc:  # this request failed: its pairs fail, the next goes on
                    out.extend([exc] * len(chunk))
            return out

        identity = {"source": "endpoint", "url": target, "api": spec.api, "model": spec.model}
        return score, True, identity


judge_source_registry.register("endpoint", EndpointSource)
