"""A property-based fuzzer over docqa's own OpenAPI schema (Schemathesis): no request, valid or not (wrong
types, out-of-range numbers, missing fields), gets a server error. The scripted generator answers, so it
costs no model; every operation runs on every `make test`, 50 examples each, derandomized (the same cases
each run). It is a net, not a proof: with the ID checks taken out, its 50 examples per operation did not
find the overflow of IDs past 2^63 (such integers are rare draws); tests/api/test_client_errors.py pins the
cases the attacker found."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error

from docqa.api.main import create_app
from docqa.api.state import AppState
from docqa.service import DocQA
from tests.support.fake_generator import SCRIPT, FakeGenerator
from tests.support.paths import SAMPLE_DOCS, make_settings

EXAMPLES = 50  # per operation (one for an operation without parameters): about 8 s in all on the 2-core VM


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    generator = FakeGenerator(SCRIPT, max_queue=64)
    # the ASGI client addresses "testserver", a name the DNS-rebinding guard must be told about
    settings = make_settings(tmp_path_factory.mktemp("fuzz") / "data", api={"allowed_hosts": "testserver"})
    qa = DocQA(settings, None, generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt", SAMPLE_DOCS / "operations_handbook.md"])
    state = AppState(qa.settings, qa=qa)
    state.loaded.set()
    yield create_app(state=state)
    qa.close()
    generator.close()


def test_no_request_is_a_server_error(app: FastAPI) -> None:
    api = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    calls: dict[str, int] = {}
    for found in api.get_all_operations():
        operation = found.ok()  # type: ignore[union-attr]  # an invalid operation raises here, failing the test
        try:
            _fuzz(operation, calls)
        except Exception as exc:  # collect every operation's failure, not only the first
            failures.append(f"{operation.method.upper()} {operation.path}: {str(exc)[:800]}")
    assert not failures, "\n\n".join(failures)
    assert len(calls) >= 12 and sum(calls.values()) >= 11 * EXAMPLES, calls  # every operation, many times


def _fuzz(operation: schemathesis.APIOperation, calls: dict[str, int]) -> None:
    # valid requests and, as the attacker sent, invalid ones (wrong types, out-of-range numbers, missing fields)
    modes = [operation.as_strategy(mode) for mode in schemathesis.GenerationMode]

    @given(case=st.one_of(modes))
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    def fuzz(case: schemathesis.Case) -> None:
        calls[operation.label] = calls.get(operation.label, 0) + 1
        case.call_and_validate(checks=[not_a_server_error])

    fuzz()
