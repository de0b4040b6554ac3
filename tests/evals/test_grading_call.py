"""The grading evals' one call to the local model's endpoint (evals/bench_grading.py `grade_once`),
used bare by the prompt bench and with log-probabilities by evals/grading_threshold.py.

The endpoint here stands in for llama.cpp's server (the real one grades in tests/graph/test_e2e_local.py,
opt-in), replying as it does with log-probabilities on; what is checked is what the evals send and
how they read the reply.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from evals import local_http
from evals.bench_grading import grade_once
from evals.grading_threshold import score_row
from evals.local_http import JSONHandler
from graph.grading import verdicts_model

REPLY = {"choices": [{"message": {"content": '{"excerpt_1": "yes", "excerpt_2": "no"}'},
                      "logprobs": {"content": [
                          {"token": '{"excerpt_1": "', "top_logprobs": []},
                          {"token": "yes", "top_logprobs": [{"token": "yes", "logprob": -0.3},
                                                            {"token": "no", "logprob": -1.4}]},
                          {"token": '", "excerpt_2": "', "top_logprobs": []},
                          {"token": "no", "top_logprobs": [{"token": "no", "logprob": -0.1},
                                                           {"token": "yes", "logprob": -2.5}]},
                          {"token": '"}', "top_logprobs": []}]}}],
         "timings": {"prompt_n": 120, "predicted_n": 14}}


@dataclass
class Endpoint:
    base_url: str
    api_key: str
    bodies: list[dict[str, Any]]


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    bodies: list[dict[str, Any]] = []

    class Handler(JSONHandler):
        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_json(200, REPLY)

    server = local_http.serve(Handler)
    try:
        yield Endpoint(local_http.url(server), "key", bodies)
    finally:
        local_http.stop(server)


def test_the_bench_call_pays_its_whole_prompt_and_reads_the_verdicts(endpoint: Endpoint) -> None:
    graded = grade_once(endpoint, [{"role": "user", "content": "grade"}], verdicts_model(2), ["a", "b"])
    assert graded.verdicts == [True, False] and graded.p_yes == {}
    assert graded.timings["prompt_n"] == 120
    [body] = endpoint.bodies
    assert body["cache_prompt"] is False and "logprobs" not in body


def test_the_threshold_eval_reads_p_yes_and_the_sampled_word_from_one_call(endpoint: Endpoint) -> None:
    row = {"id": "q1", "question": "What was revenue?", "evidence_pages": [3],
           "citations": [{"name": "a.pdf", "page": 3, "text": "Revenue 1,234"},
                         {"name": "a.pdf", "page": 9, "text": "Leases"}]}
    scored = score_row(endpoint, row)
    assert scored["labels"] == [True, False] and scored["sampled"] == [True, False]
    assert scored["p_yes"][0] == pytest.approx(0.750, abs=0.01) and scored["p_yes"][1] == pytest.approx(0.083, abs=0.01)
    [body] = endpoint.bodies
    assert body["logprobs"] is True and body["top_logprobs"] > 1 and body["cache_prompt"] is True


def test_both_evals_count_verdicts_one_way() -> None:
    from evals.bench_grading import tally

    counted = tally([(True, True), (True, False), (False, False), (False, False), (False, True)])
    assert counted == {"excerpts": 5, "accuracy": 0.6, "balanced": round((1 / 2 + 2 / 3) / 2, 3), "evidence_kept": 1,
                       "evidence_dropped": 1, "other_kept": 1, "other_dropped": 2}
