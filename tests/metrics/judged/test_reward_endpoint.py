"""``reward`` from an HTTP endpoint (``"type": "endpoint"``), served here by a stub server on 127.0.0.1: the
request is the API's (vLLM's Score API ``/score`` with text_1/text_2, or the plain ``prompts``/``responses``), pairs
go in batches of ``batch_size``, the scores come back by index, and an error reply fails the pairs of its request
alone with one line naming the endpoint."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from olive_eval.judges import judges_of
from olive_eval.metrics.judged.reward import scoring
from olive_eval.metrics.registry import get_metric

#: What the stub server was asked, request by request.
REQUESTS: list[dict] = []


def stub_score(prompt: str, response: str) -> float:
    """The stub's reward: a number the test can compute too (words shared, less a length penalty)."""
    shared = len(set(prompt.split()) & set(response.split()))
    return shared - 0.1 * len(response.split())


class Stub(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        REQUESTS.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        plain = self.path == "/plain"
        prompts, responses = (body["prompts"], body["responses"]) if plain else (body["text_1"], body["text_2"])
        if any("boom" in r for r in responses):
            self._reply(500, {"error": "boom"})
            return
        scores = [None if "skip" in r else stub_score(p, r) for p, r in zip(prompts, responses, strict=True)]
        if plain:
            self._reply(200, {"scores": scores})
        else:  # out of order, as a server may send them: read by index
            rows = [{"index": i, "object": "score", "score": s} for i, s in enumerate(scores)]
            self._reply(200, {"id": "score-1", "object": "list", "data": rows[::-1]})

    def _reply(self, code: int, payload: dict) -> None:
        reply = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    httpd = HTTPServer(("127.0.0.1", 0), Stub)
    # shutdown() waits for the loop's next poll: a short one, not the default half second per test
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    REQUESTS.clear()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def score(spec: dict, queries: list[str], responses: list[str]):
    metric = get_metric("reward", {"reward": spec})
    judges = judges_of(scoring(spec))
    metric.bind_judges(judges)
    try:
        stats = metric.statistics(queries, responses)
        return metric.reduce(stats), metric.instance_scores(stats)
    finally:
        for judge in judges.values():
            judge.close()


QUERIES = ["the cat sits", "a dog runs fast", "birds fly", "red and blue", "water is wet"]
RESPONSES = ["the cat", "a dog runs", "", "blue and red and green", "water"]


def test_the_score_api_gets_batches_of_pairs_and_its_scores_by_index(server, monkeypatch):
    monkeypatch.setenv("REWARD_KEY", "s3cret")
    spec = {"type": "endpoint", "url": server + "/", "model": "rm", "batch_size": 2, "api_key_env": "REWARD_KEY"}
    result, each = score(spec, QUERIES, RESPONSES)
    expected = np.array([stub_score(q, r) for q, r in zip(QUERIES, RESPONSES, strict=True)])
    np.testing.assert_allclose(each, expected)
    assert result.value == pytest.approx(expected.mean())
    assert [len(r["text_1"]) for r in REQUESTS] == [2, 2, 1]  # batch_size pairs per request, the last short
    assert REQUESTS[0] == {
        "path": "/score",
        "auth": "Bearer s3cret",
        "model": "rm",
        "text_1": QUERIES[:2],
        "text_2": RESPONSES[:2],
    }
    assert result.details["reward"] == {"source": "endpoint", "url": server + "/score", "api": "score", "model": "rm"}


def test_the_plain_api_posts_prompts_and_responses_to_the_url(server):
    spec = {"type": "endpoint", "url": server + "/plain", "api": "plain"}
    result, each = score(spec, QUERIES, RESPONSES)
    np.testing.assert_allclose(each, [stub_score(q, r) for q, r in zip(QUERIES, RESPONSES, strict=True)])
    assert result.details["reward"]["url"] == server + "/plain"
    assert len(REQUESTS) == 1 and REQUESTS[0]["path"] == "/plain" and "model" not in REQUESTS[0]
    assert REQUESTS[0]["prompts"] == QUERIES and REQUESTS[0]["auth"] is None


@pytest.mark.parametrize("api", ["score", "plain"])
def test_an_error_reply_fails_the_pairs_of_its_request_only(server, api):
    spec = {"type": "endpoint", "url": server + ("/plain" if api == "plain" else ""), "api": api, "batch_size": 2}
    responses = ["the cat", "a dog", "boom", "fine", "skip me"]
    result, each = score(spec, QUERIES, responses)
    # requests: [0, 1] fine; [2, 3] refused (HTTP 500): both fail; [4] answered without a score: it fails
    good = [stub_score(QUERIES[i], responses[i]) for i in (0, 1)]
    np.testing.assert_allclose(each[:2], good)
    assert np.isnan(each[2:]).all()
    assert result.value == pytest.approx(np.mean(good))
    assert (result.details["scored"], result.details["failed"]) == (2, 3)
    target = server + ("/plain" if api == "plain" else "/score")
    first = result.details["messages"][0]
    assert first == (
        f"reward, example 2: failed: the judge failed on this item: EndpointReplyError: endpoint {target}: "
        "HTTP 500 Internal Server Error"
    )
    assert result.details["messages"][2].endswith(f"endpoint {target}: no score for this pair")


def test_an_unreachable_endpoint_fails_every_example_and_the_value_is_undefined():
    spec = {"type": "endpoint", "url": "http://127.0.0.1:9/", "request_timeout": 5}
    result, each = score(spec, QUERIES[:2], RESPONSES[:2])
    assert np.isnan(result.value) and np.isnan(each).all()
    assert result.undefined.startswith("no example was scored")
    assert "endpoint http://127.0.0.1:9/score: " in result.details["messages"][0]


def test_a_missing_key_variable_fails_with_its_name(server, monkeypatch):
    monkeypatch.delenv("NO_SUCH_REWARD_KEY", raising=False)
    spec = {"type": "endpoint", "url": server, "api_key_env": "NO_SUCH_REWARD_KEY"}
    result, _ = score(spec, QUERIES[:1], RESPONSES[:1])
    assert result.details["messages"][0].endswith("environment variable NO_SUCH_REWARD_KEY is not set")
    assert REQUESTS == []
