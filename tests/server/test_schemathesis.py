"""The standing attack suite, part 1: schemathesis over the server's own OpenAPI document.

Every operation the live server publishes (new routes join by construction) gets a bounded number
of generated requests, schema-conforming and schema-violating (NUL bytes included), sent with a
real bearer token. No response may be a 5xx, and the checks below must hold. The user may ask only
a few questions an hour, so the graph runs a handful of times and the rest answer 429 at once.

Runtime: QUESTIONS graph runs plus 2 x EXAMPLES requests per operation (measured time in
docs/protection.md).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.config._checks import NegativeDataRejectionConfig
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tests.server.conftest import signup

EXAMPLES = 5  # generated requests per operation and mode (CI budget: docs/protection.md)
QUESTIONS = 3  # graph runs the suite's user may start (QUESTIONS_PER_HOUR)
# Every built-in check runs but one: positive_data_acceptance expects every schema-valid request to
# succeed, and the server rightly refuses some of them on what a schema cannot say (a file that is
# not a PDF, a whitespace-only question, an id that is not yours). Those refusals must still be
# documented statuses (status_code_conformance) and never 5xx (not_a_server_error).
EXCLUDED = [positive_data_acceptance]
# Schema-violating requests must be refused with one of these (413/415: too large, not a PDF).
REJECTIONS = [400, 401, 403, 404, 406, 413, 415, 422, 428]


@pytest.fixture(scope="module")
def fuzzed(start_server, server_settings):
    live = start_server(server_settings.model_copy(update={"questions_per_hour": QUESTIONS}))
    with live.client() as c:
        token = signup(c, "fuzz")["tokens"]["access_token"]
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    schema.config.update(base_url=live.url)
    schema.config.checks.negative_data_rejection = NegativeDataRejectionConfig(expected_statuses=REJECTIONS)
    return schema, {"Authorization": f"Bearer {token}"}


def drops_a_query_parameter(case: Any) -> bool:
    """Whether a declared query parameter the case generated is absent from the URL sent: schemathesis 4.15.2
    sends an empty list or object as no parameter at all, then counts the request as schema-violating (fixed
    later)."""
    sent = case.as_transport_kwargs(base_url="http://host")
    url = requests.Request("GET", sent["url"], params=sent.get("params")).prepare().url or ""
    names = {name for name, _ in parse_qsl(urlsplit(url).query, keep_blank_values=True)}
    declared = {parameter.name for parameter in case.operation.query}
    return any(name in declared and name not in names for name in case.query or {})


def run_operation(operation: Any, mode: GenerationMode, headers: dict[str, str]) -> str | None:
    """The first failure of `EXAMPLES` generated requests to one operation, or None."""

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(generation_mode=mode))
    def check(case: Any) -> None:
        if mode is GenerationMode.NEGATIVE and drops_a_query_parameter(case):
            return  # what is sent violates nothing
        case.call_and_validate(headers=headers, timeout=60, excluded_checks=EXCLUDED)

    try:
        check()
    except Unsatisfiable:  # negative mode for an operation without inputs: nothing to break
        return None
    except (Exception, BaseExceptionGroup) as exc:  # collected: every operation runs, then all failures show
        return f"{operation.label} [{mode.value}]: {type(exc).__name__}: {str(exc)[:1500]}"
    return None


def test_no_operation_answers_5xx_or_breaks_its_schema(fuzzed) -> None:
    schema, headers = fuzzed
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 20  # the walk found the server's routes
    failures = [f for op in operations for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
                if (f := run_operation(op, mode, headers))]
    assert not failures, "\n\n".join(failures)
