"""Embeddings from an OpenAI-compatible endpoint, served here by a stub server on localhost: the request is the
API's (model, input, bearer key from the named environment variable), the similarity is the cosine of the vectors
the endpoint returned, and a failing endpoint is one line naming it."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from olive_eval.metrics.registry import get_metric
from olive_eval.metrics.violations.endpoint_embeddings import EndpointError, endpoint_encoder
from olive_eval.metrics.violations.similarity import embedding_similarity


def vector(text: str) -> list[float]:
    """A deterministic 8-dim embedding of a text (words hashed into buckets)."""
    v = np.zeros(8)
    for word in text.lower().split():
        v[int(hashlib.sha256(word.encode()).hexdigest(), 16) % 8] += 1.0
    return v.tolist()


#: What the stub server was asked, request by request.
REQUESTS: list[dict] = []


class Stub(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        REQUESTS.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            return
        data = [{"index": i, "embedding": vector(t)} for i, t in reversed(list(enumerate(body["input"])))]
        reply = json.dumps({"data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint():
    server = HTTPServer(("127.0.0.1", 0), Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    REQUESTS.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_the_similarity_is_the_cosine_of_the_endpoints_vectors(endpoint, monkeypatch):
    monkeypatch.setenv("STUB_KEY", "sk-test")
    a = ["passive voice used", "spelling error", "banned word"]
    b = ["use of the passive voice", "a spelling error here", "forbidden word", "spelling error"]
    ia, ib = np.array([0, 1, 1, 2]), np.array([0, 1, 3, 2])
    got = embedding_similarity(endpoint_encoder(endpoint, "ada", "STUB_KEY", batch_size=2))(a, b, ia, ib)
    expected = []
    for i, j in zip(ia, ib, strict=True):
        va, vb = np.array(vector(a[i])), np.array(vector(b[j]))
        expected.append(float(va @ vb / np.linalg.norm(va) / np.linalg.norm(vb)))
    assert got == pytest.approx(expected)
    assert got[2] == pytest.approx(1.0)  # the same text
    assert {r["path"] for r in REQUESTS} == {"/v1/embeddings"}
    assert {r["auth"] for r in REQUESTS} == {"Bearer sk-test"} and {r["model"] for r in REQUESTS} == {"ada"}
    assert all(len(r["input"]) <= 2 for r in REQUESTS)  # batched


def test_a_failing_endpoint_or_a_missing_key_is_one_line(endpoint, monkeypatch):
    with pytest.raises(EndpointError, match=r"^embedding endpoint http://127\.0\.0\.1:\d+/v1/embeddings: HTTP 500"):
        endpoint_encoder(endpoint, "broken")(["a"])
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(EndpointError, match="environment variable NO_SUCH_KEY is not set"):
        endpoint_encoder(endpoint, "ada", "NO_SUCH_KEY")(["a"])


def test_the_violation_metrics_take_the_endpoint_and_refuse_both_sources(endpoint):
    config = {"similarity": "embedding", "embedding_endpoint": endpoint, "endpoint_model": "ada"}
    metric = get_metric("std_match_score", config)
    span = {"span": [0, 5], "category": "style", "rule": "passive voice used", "explanation": "x", "correction": "y"}
    other = {**span, "rule": "use of the passive voice"}
    stats = metric.statistics([[span]], [[other]], ["The report was written."])
    assert np.isfinite(metric.reduce(stats).value) and REQUESTS
    with pytest.raises(ValueError, match="needs one of embedding_model"):
        get_metric("std_match_score", {**config, "embedding_model": "."})
    with pytest.raises(ValueError, match="apply to similarity 'embedding'"):
        get_metric("std_match_score", {"embedding_endpoint": endpoint})
