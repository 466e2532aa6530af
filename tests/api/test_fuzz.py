"""A property-based fuzzer over docqa's own OpenAPI schema (Schemathesis): no request, valid or not (wrong
types, out-of-range numbers, missing fields, strings with lone surrogates and NUL), gets a server error, and
every 4xx is in docqa's error shape ({"error": {"type", "message"}}). It runs over four apps: SQLite without
keys, SQLite with keys (with and without the key), Postgres, and a generator node. The scripted generator
answers, so it costs no model (the node embeds with the demo model); every operation runs on every `make
test`, derandomized (the same cases each run). The upload route declares its multipart body, so files,
passwords and metadata are fuzzed too.

It is a net, not a proof: with the ID checks taken out, its 50 examples per operation did not find the
overflow of IDs past 2^63 (such integers are rare draws); tests/api/test_client_errors.py pins the cases the
attacker found."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from starlette.testclient import TestClient

from docqa.api.main import create_app
from docqa.api.state import AppState
from docqa.llama.embedder import LlamaEmbedder
from docqa.service import DocQA
from docqa.service.node import ModelNode
from tests.support.fake_generator import SCRIPT, FakeGenerator
from tests.support.paths import SAMPLE_DOCS, make_settings
from tests.support.postgres import TestPostgres

EXAMPLES = 50  # per operation (one for an operation without parameters): about 8 s an app on the 2-core VM
EVIL = "\ud800\x00\udfff\u202e"  # lone surrogates, NUL and a bidi override, appended to a string of a body
KEY = "fuzz-key-1"
NO_OCR = {"ocr": "off"}  # a fuzzed PDF without text would be read by OCR: seconds each, nothing to learn


def _shape_problem(status: int, content: bytes) -> str | None:
    """What is wrong with a response: a 5xx, or a 4xx not in docqa's error object (a client reads `error.type`
    and `error.message` on every route)."""
    if status >= 500:
        return f"{status}: {content[:300]!r}"
    if status < 400:
        return None
    try:
        body = json.loads(content)
    except ValueError:
        return f"{status} without a JSON body: {content[:200]!r}"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("type"), str) and isinstance(error.get("message"), str):
        return None
    return f"{status} not in docqa's error shape: {str(body)[:300]}"


def _docqa_error_shape(ctx: Any, response: Any, case: schemathesis.Case) -> bool | None:
    problem = _shape_problem(response.status_code, response.content)
    if problem and response.status_code < 500:  # a 5xx is not_a_server_error's to report
        raise AssertionError(problem)
    return None


def _strings(value: Any) -> int:
    if isinstance(value, str):
        return 1
    if isinstance(value, list):
        return sum(_strings(v) for v in value)
    if isinstance(value, dict):
        return sum(_strings(v) for v in value.values())
    return 0


def _with_evil_string(value: Any, which: list[int]) -> Any:
    """The body with EVIL appended to one of its strings (which[0] counts down to it, in document order): one
    at a time, so the others stay valid and the request reaches past validation to the handler (the
    attacker's collection '\\ud800' in an otherwise good ask reached a 500)."""
    if isinstance(value, str):
        which[0] -= 1
        return value + EVIL if which[0] == -1 else value
    if isinstance(value, list):
        return [_with_evil_string(v, which) for v in value]
    if isinstance(value, dict):
        return {k: _with_evil_string(v, which) for k, v in value.items()}
    return value


def _fuzz_app(app: FastAPI, headers: dict[str, str] | None = None, examples: int = EXAMPLES) -> dict[str, int]:
    api = schemathesis.openapi.from_asgi("/openapi.json", app, headers={"Authorization": f"Bearer {KEY}"})
    client = TestClient(app, raise_server_exceptions=False)
    failures: list[str] = []
    calls: dict[str, int] = {}
    for found in api.get_all_operations():
        operation = found.ok()  # type: ignore[union-attr]  # an invalid operation raises here, failing the test
        try:
            _fuzz(operation, calls, headers, examples, client)
        except Exception as exc:  # collect every operation's failure, not only the first
            failures.append(f"{operation.method.upper()} {operation.path}: {str(exc)[:800]}")
    assert not failures, "\n\n".join(failures)
    return calls


def _fuzz(
    operation: schemathesis.APIOperation,
    calls: dict[str, int],
    headers: dict[str, str] | None,
    examples: int,
    client: TestClient,
) -> None:
    # valid requests and, as the attacker sent, invalid ones (wrong types, out-of-range numbers, missing fields)
    modes = [operation.as_strategy(mode) for mode in schemathesis.GenerationMode]

    @given(case=st.one_of(modes))
    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        phases=[
            Phase.explicit,
            Phase.reuse,
            Phase.generate,
        ],  # no shrinking: a failure is reported as drawn, in seconds
    )
    def fuzz(case: schemathesis.Case) -> None:
        calls[operation.label] = calls.get(operation.label, 0) + 1
        case.call_and_validate(headers=headers, checks=[not_a_server_error, _docqa_error_shape])
        strings = _strings(case.body) if case.media_type in (None, "application/json") else 0
        if isinstance(case.body, dict) and strings:
            # the same request with EVIL in every string, sent by hand: Schemathesis' own validation of a case
            # cannot hold a lone surrogate; JSON's \ud800 escape carries it, as the attacker sent it
            query = {k: v + "\x00" if isinstance(v, str) else v for k, v in (case.query or {}).items()}
            response = client.request(
                operation.method.upper(),
                case.formatted_path,
                params=query,
                content=json.dumps(_with_evil_string(case.body, [calls[operation.label] % strings])),
                headers={**(headers or {}), "content-type": "application/json"},
            )
            problem = _shape_problem(response.status_code, response.content)
            assert problem is None, f"with lone surrogates and NUL in every string: {problem}"

    fuzz()


def _app(qa: DocQA) -> FastAPI:
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt", SAMPLE_DOCS / "operations_handbook.md"])
    state = AppState(qa.settings, qa=qa)
    state.loaded.set()
    return create_app(state=state)


@pytest.fixture
def generator() -> Iterator[FakeGenerator]:
    """One per test: closing a DocQA closes its generator."""
    generator = FakeGenerator(SCRIPT, max_queue=64)
    yield generator
    generator.close()


@pytest.fixture
def sqlite_qa(tmp_path_factory: pytest.TempPathFactory, generator: FakeGenerator) -> Iterator[DocQA]:
    # the ASGI client addresses "testserver", a name the DNS-rebinding guard must be told about
    settings = make_settings(
        tmp_path_factory.mktemp("fuzz") / "data", api={"allowed_hosts": "testserver"}, ingest=NO_OCR
    )
    qa = DocQA(settings, None, generator)
    yield qa
    qa.close()


def test_no_request_is_a_server_error_and_every_4xx_is_docqas_shape(sqlite_qa: DocQA) -> None:
    calls = _fuzz_app(_app(sqlite_qa))
    assert len(calls) >= 12 and sum(calls.values()) >= 11 * EXAMPLES, calls  # every operation, many times
    assert "POST /v1/collections/{name}/documents" in calls  # the upload body is declared, so it is fuzzed


def test_with_keys_on_with_and_without_the_key(
    tmp_path_factory: pytest.TempPathFactory, generator: FakeGenerator
) -> None:
    settings = make_settings(
        tmp_path_factory.mktemp("fuzz-keys") / "data", api={"allowed_hosts": "testserver", "keys": KEY}, ingest=NO_OCR
    )
    qa = DocQA(settings, None, generator)
    try:
        app = _app(qa)
        _fuzz_app(app, {"Authorization": f"Bearer {KEY}"})
        _fuzz_app(app, {"Authorization": "Bearer not-the-key\x00"}, examples=10)  # 401s, in docqa's shape
    finally:
        qa.close()


def test_on_postgres(
    postgres_server: TestPostgres, tmp_path_factory: pytest.TempPathFactory, generator: FakeGenerator
) -> None:
    settings = make_settings(
        tmp_path_factory.mktemp("fuzz-pg") / "data",
        database_url=postgres_server.new_database(),
        api={"allowed_hosts": "testserver"},
        ingest=NO_OCR,
    )
    qa = DocQA(settings, None, generator)
    try:
        _fuzz_app(_app(qa), examples=25)
    finally:
        qa.close()


def test_the_generator_node(
    tmp_path_factory: pytest.TempPathFactory, generator: FakeGenerator, embedder: LlamaEmbedder
) -> None:
    settings = make_settings(tmp_path_factory.mktemp("fuzz-node") / "never", api={"allowed_hosts": "testserver"})
    state = AppState(settings, generator_only=True, node=ModelNode(generator, embedder))
    state.loaded.set()
    calls = _fuzz_app(create_app(state=state), examples=25)
    assert {"POST /v1/completions", "POST /v1/embeddings", "POST /v1/tokenize"} <= set(calls), calls
