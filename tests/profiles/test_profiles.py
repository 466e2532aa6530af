"""Document profiles as optional components (docqa.profiles): chosen by DOCQA_RETRIEVAL_PROFILES, listed by
`docqa profiles`, and added by a user without touching docqa, on a real SQLite store."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from docqa.cli.main import main
from docqa.core.errors import InvalidRequestError
from docqa.core.identity import ChunksSaying, DocumentIdentity
from docqa.core.query import FavouredTitles
from docqa.profiles.generic import GenericProfile
from docqa.profiles.protocol import Hints
from docqa.profiles.registry import ProfileSet
from docqa.retrieval.understanding import understand
from docqa.store.db import SqliteStore
from tests.support.profiles import PROFILES
from tests.support.store_rows import bm25, save

TEN_K_COVER = (
    "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nFORM 10-K\nFor the fiscal year ended December 31, 2022\n"
    "Commission file number 1-1234\nACME CORP\n(Exact name of registrant as specified in its charter)\n"
)


def test_the_set_is_chosen_by_name_and_an_unknown_name_is_refused_naming_the_installed_ones() -> None:
    assert ProfileSet.named("auto").names == ("csrc", "sec", "contracts")
    assert ProfileSet.named("none").names == ()
    assert ProfileSet.named("contracts, sec").names == ("sec", "contracts")  # the installed order stands
    with pytest.raises(InvalidRequestError, match=r"no profile 'patents'; installed: csrc, sec, contracts"):
        ProfileSet.named("sec,patents")


def test_without_profiles_a_filing_is_a_plain_document_and_a_question_only_its_words() -> None:
    question = "What was Acme's capital expenditure in FY2022, from the cash flow statement?"
    every, generic = understand(question, PROFILES), understand(question, ProfileSet.named("none"))
    assert every.favoured and every.favoured[0].marks_page  # the cash flow statement's titles
    assert generic.terms == every.terms and generic.favoured == () and generic.head == "auto"
    assert PROFILES.identity("ACME_2022_10K.pdf", TEN_K_COVER, lambda phrases: []) is not None
    assert ProfileSet.named("none").identity("ACME_2022_10K.pdf", TEN_K_COVER, lambda phrases: []) is None
    assert ProfileSet.named("none").catalog("ACME_2022_10K.pdf", TEN_K_COVER, [TEN_K_COVER]) is None


def test_a_store_without_profiles_keeps_no_identity_and_catalogs_a_filing_by_its_title(tmp_path: Path) -> None:
    plain, profiled = SqliteStore(tmp_path / "a.sqlite3"), SqliteStore(tmp_path / "b.sqlite3", reader=PROFILES)
    for store in (plain, profiled):
        coll = store.collection("c", create=True).id
        save(store, coll, "ACME_2022_10K.pdf", [TEN_K_COVER + "Item 1. Business\nWe make anvils. " * 20], None)
    assert plain.document_identities(1) == {} and _catalog(plain, 1)["kind"] == "document"
    assert next(iter(profiled.document_identities(1).values())).profile == "sec"
    assert _catalog(profiled, 1)["form"] == "10-K"


def _catalog(store: SqliteStore, collection_id: int) -> dict[str, Any]:
    return dict(json.loads(store.documents(collection_id)[0].catalog or "{}"))


class Claims:
    """The identity the example profile gives a patent."""

    profile = "patents"
    names: tuple[tuple[str, ...], ...] = ()


class PatentsProfile(GenericProfile):
    """docs/profiles.md's example: a patent's claims hold what a question about its scope asks."""

    name = "patents"
    description = "patents: a question about what is protected is answered by the claims"

    def identity(self, file_name: str, head: str, chunks_saying: ChunksSaying) -> DocumentIdentity | None:
        return Claims() if "United States Patent" in head[:400] else None

    def catalog(self, file_name: str, head: str, texts: Sequence[str]) -> dict[str, Any] | None:
        return {"kind": "patent"} if "United States Patent" in head[:400] else None

    def understand(self, question: str, identities: Mapping[int, DocumentIdentity] | None) -> Hints:
        if "protect" not in question.lower() and "scope" not in question.lower():
            return Hints()
        return Hints(favoured=(FavouredTitles(("claims", "what is claimed is"), 8.0, only_in=self.name),))


PATENT = [
    "United States Patent 9,999,999\nAnvil with a spring-loaded horn\nAbstract\nAn anvil whose horn folds away.",
    "BACKGROUND\nA spring hinge lets a horn fold; a hinge wears, a hinge squeaks, every hinge needs oil.\n" * 6,
    "CLAIMS\nWhat is claimed is: an anvil whose horn is held by a spring hinge, as described above. "
    + "The anvil as claimed, of any size and any steel. " * 12,
]


def test_a_profile_a_user_adds_steers_its_documents_without_touching_docqa(tmp_path: Path) -> None:
    with_patents = ProfileSet([*PROFILES.profiles, PatentsProfile()])
    store = SqliteStore(tmp_path / "db.sqlite3", reader=with_patents)
    coll = store.collection("c", create=True).id
    saved = save(store, coll, "anvil-patent.pdf", PATENT, None)
    for n in range(12):  # other documents, so that the question's words are rare ones
        save(store, coll, f"other{n}.txt", [f"Minutes of meeting {n} of the garden club. " * 30], None, sha=f"o{n}")
    assert _catalog(store, coll) == {"kind": "patent"}
    question = "What scope does the anvil patent give the hinge?"
    assert bm25(store, coll, question, 3, saved.document_id, PROFILES)[0][0] == saved.chunk_ids[1]  # the repeats
    assert bm25(store, coll, question, 3, saved.document_id, with_patents)[0][0] == saved.chunk_ids[2]  # claims


def test_docqa_profiles_lists_what_each_knows_and_which_are_on(tmp_path: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(main, ["profiles", "--data-dir", str(tmp_path)], env={"DOCQA_RETRIEVAL_PROFILES": "sec"})
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert lines[0].startswith("on   generic") and any(line.startswith("on   sec") for line in lines)
    assert any(line.startswith("off  contracts") for line in lines) and "Regulation S-K" in listed.output
    wrong = runner.invoke(main, ["profiles", "--data-dir", str(tmp_path)], env={"DOCQA_RETRIEVAL_PROFILES": "sek"})
    assert wrong.exit_code != 0 and "no profile 'sek'" in wrong.output


def _package(root: Path, name: str, entry_points: str, module: str) -> None:
    """An installed package as importlib.metadata finds one on sys.path: its module and its dist-info."""
    (root / f"{name}.py").write_text(module)
    info = root / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[docqa.profiles]\n{entry_points}\n")


def test_a_package_adds_a_profile_through_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    example = (Path(__file__).parents[2] / "docs" / "profiles.md").read_text()
    module = example.split("```python\n", 1)[1].split("```", 1)[0]  # docs/profiles.md's example, as written
    _package(tmp_path, "my_patents", "patents = my_patents:PatentsProfile", module)
    _package(tmp_path, "broken_profile", "broken = broken_profile:Missing", "")
    monkeypatch.syspath_prepend(str(tmp_path))
    every = ProfileSet.named("auto")
    assert every.names == ("csrc", "sec", "contracts", "patents")
    assert "profile 'broken' from broken_profile:Missing could not be loaded" in caplog.text
    patents = ProfileSet.named("patents")
    assert patents.identity("p.pdf", "United States Patent 9,999,999\nAnvil", lambda phrases: []) is not None
    hints, _ = patents.understand("What scope does the anvil patent protect?", {})
    assert hints.favoured[0].titles == ("claims", "what is claimed is")
