"""The standing attack suite, part 1: schemathesis over the server's own OpenAPI document.

Every operation the live server publishes (new routes join by construction) gets a bounded number
of generated requests, schema-conforming and schema-violating (NUL bytes included), sent with a
real bearer token. No response may be a 5xx, and the checks below must hold. The user may ask only
a few questions an hour, so the graph runs a handful of times and the rest answer 429 at once.

Runtime: about QUESTIONS graph runs plus EXAMPLES requests per operation (see tests/README or
docs/protection.md for the measured time on 2 cores).
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis import GenerationMode

from tests.server.conftest import signup

EXAMPLES = 12  # generated requests per operation and mode
QUESTIONS = 3  # graph runs the suite's user may start (QUESTIONS_PER_HOUR)

# Every built-in check runs except these (why): none so far.
EXCLUDED: list = []


@pytest.fixture(scope="module")
def api_schema(start_server, server_settings):  # noqa: ANN001, ANN201
    live = start_server(server_settings.model_copy(update={"questions_per_hour": QUESTIONS}))
    with live.client() as c:
        token = signup(c, "fuzz")["tokens"]["access_token"]
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    schema.config.update(base_url=live.url, headers={"Authorization": f"Bearer {token}"})
    schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
                                    max_examples=EXAMPLES, deterministic=True, no_shrink=True)
    return schema


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
def test_no_operation_answers_5xx(case) -> None:  # noqa: ANN001
    case.call_and_validate(timeout=60, excluded_checks=EXCLUDED)
