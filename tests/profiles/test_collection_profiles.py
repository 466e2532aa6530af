"""A collection's own choice among the deployment's document profiles: read by retrieval for its questions
only, kept in the store (SQLite here; the column is the same on Postgres), chosen through the CLI and the API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from docqa.api.main import create_app
from docqa.api.state import AppState
from docqa.cli.main import main
from docqa.core.errors import InvalidRequestError
from docqa.service import DocQA
from docqa.service.profiles import choose_profiles, collection_profiles
from tests.support.paths import make_settings

QUESTION = "What was Acme's capital expenditure in FY2022, from the cash flow statement?"


@pytest.fixture
def qa(tmp_path: Path) -> Iterator[DocQA]:
    qa = DocQA.open(make_settings(tmp_path / "home"), embedder=False, generator=False)
    for name in ("filings", "contracts"):
        qa.collection(name, create=True)
    yield qa
    qa.close()


def test_a_collection_reads_its_questions_with_the_profiles_it_chose(qa: DocQA) -> None:
    filings, contracts = qa.collection("filings"), qa.collection("contracts")
    before = qa.store.generation(contracts.id)
    chosen = choose_profiles(qa, "contracts", "contracts")
    assert (chosen.chosen, chosen.on) == ("contracts", ("contracts",))
    assert qa.store.generation(contracts.id) == before + 1  # its cached answers went
    assert qa.retriever.understand(qa.collection("contracts"), QUESTION).favoured == ()  # no statement titles
    assert qa.retriever.understand(filings, QUESTION).favoured  # the other collection keeps the deployment's
    assert collection_profiles(qa, "filings").on == ("csrc", "sec", "contracts")
    assert choose_profiles(qa, "contracts", "none").on == ()
    assert choose_profiles(qa, "contracts", "auto").chosen is None
    with pytest.raises(InvalidRequestError, match=r"'patents' not switched on here; on: csrc, sec, contracts"):
        choose_profiles(qa, "contracts", "patents")


def test_a_collection_cannot_choose_a_profile_the_deployment_switched_off(tmp_path: Path) -> None:
    qa = DocQA.open(
        make_settings(tmp_path / "home", retrieval={"profiles": "contracts"}), embedder=False, generator=False
    )
    try:
        qa.collection("filings", create=True)
        with pytest.raises(InvalidRequestError, match=r"'sec' not switched on here; on: contracts"):
            choose_profiles(qa, "filings", "sec")
    finally:
        qa.close()


def test_the_cli_shows_and_chooses_a_collections_profiles(qa: DocQA) -> None:
    home = str(qa.settings.data_dir)
    qa.close()
    runner = CliRunner()
    shown = runner.invoke(main, ["collections", "profiles", "filings", "--data-dir", home])
    assert shown.exit_code == 0 and "csrc, sec, contracts on; chosen: auto" in shown.output, shown.output
    chose = runner.invoke(main, ["collections", "profiles", "filings", "sec,csrc", "--json", "--data-dir", home])
    assert chose.exit_code == 0 and json.loads(chose.stdout)["on"] == ["csrc", "sec"], chose.output
    wrong = runner.invoke(main, ["collections", "profiles", "filings", "sek", "--data-dir", home])
    assert wrong.exit_code != 0 and "'sek' not switched on here" in wrong.output


def test_the_api_shows_and_chooses_a_collections_profiles(qa: DocQA) -> None:
    with TestClient(create_app(state=AppState(qa.settings, qa=qa)), base_url="http://localhost") as client:
        assert client.get("/v1/collections/filings/profiles").json()["chosen"] is None
        put = client.put("/v1/collections/filings/profiles", json={"profiles": "contracts"})
        assert put.status_code == 200 and put.json() == {
            "collection": "filings",
            "chosen": "contracts",
            "on": ["contracts"],
        }
        bad = client.put("/v1/collections/filings/profiles", json={"profiles": "patents"})
        assert bad.status_code == 400 and "'patents' not switched on here" in bad.json()["error"]["message"]
        assert client.get("/v1/collections/nope/profiles").status_code == 404
