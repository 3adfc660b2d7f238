"""Embeddings from an OpenAI-compatible endpoint (the deck's text-embeddings-ada-002): ``POST <url>/embeddings``
with ``{"model", "input": [texts]}``, the vectors read from ``data[i].embedding`` in ``index`` order. The endpoint
is reached only because the config names it; its key, if any, is read from the environment variable the config
names, never from the config itself."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable

import numpy as np

#: ``encode(texts) -> [len(texts), dim]`` unit-length vectors.
Encode = Callable[[list[str]], np.ndarray]


class EndpointError(RuntimeError):
    """The endpoint refused or answered something that is not embeddings: one line naming it."""


def endpoint_encoder(
    url: str, model: str, api_key_env: str | None = None, batch_size: int = 64, timeout: float = 60.0
) -> Encode:
    """How texts are embedded through the endpoint at ``url`` (its base, e.g. ``http://host:8000/v1``)."""
    target = url.rstrip("/") + "/embeddings"

    def post(texts: list[str]) -> list[list[float]]:
        headers = {"Content-Type": "application/json"}
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise EndpointError(f"embedding endpoint {target}: environment variable {api_key_env} is not set")
            headers["Authorization"] = f"Bearer {key}"
        body = json.dumps({"model": model, "input": texts}).encode()
        request = urllib.request.Request(target, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                reply = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise EndpointError(f"embedding endpoint {target}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise EndpointError(f"embedding endpoint {target}: {getattr(exc, 'reason', exc)}") from None
        except ValueError:
            raise EndpointError(f"embedding endpoint {target}: the reply is not JSON") from None
        try:
            rows = sorted(reply["data"], key=lambda row: row["index"])
            vectors = [row["embedding"] for row in rows]
        except (KeyError, TypeError):
            raise EndpointError(f"embedding endpoint {target}: the reply has no data[i].embedding") from None
        if len(vectors) != len(texts):
            raise EndpointError(f"embedding endpoint {target}: {len(vectors)} embeddings for {len(texts)} texts")
        return vectors

    def encode(texts: list[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), batch_size):
            rows.extend(post(texts[start : start + batch_size]))
        vectors = np.asarray(rows, dtype=np.float64).reshape(len(texts), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)

    return encode
