"""Ingestion with the real demo embedder, real FAISS and a real SQLite file."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest

from docqa.core.errors import ConfigError, DocumentNotFoundError, EmbeddingModelMismatchError
from docqa.core.settings import ChunkingSettings, EmbedSettings, RetrievalSettings
from docqa.llama.embedder import LlamaEmbedder, l2_normalise
from docqa.retrieval.retriever import Retriever
from docqa.service import DocQA
from tests.support.bert_gguf import read_safetensors, write_bert_gguf
from tests.support.paths import QWEN_VOCAB, SAMPLE_DOCS, make_settings
from tests.support.tiny_bert import write_tiny_bert
from tests.support.tiny_qwen3 import build_tiny_qwen3

pytestmark = pytest.mark.slow


def test_sample_docs_ingest_with_pages_chunks_and_vectors(sample_qa) -> None:  # type: ignore[no-untyped-def]
    docs = {d.name: d for d in sample_qa.documents()}
    assert set(docs) == {
        "annual_report_2025.pdf",
        "operations_handbook.md",
        "services_agreement_en.txt",
        "supply_contract_zh.txt",
    }
    assert docs["annual_report_2025.pdf"].pages == 4
    assert all(d.status == "ready" and d.n_chunks >= 1 for d in docs.values())
    coll = sample_qa.collection()
    index = sample_qa.indexes.get(coll)
    assert sorted(index.ids().tolist()) == sorted(sample_qa.store.chunk_ids(coll.id).tolist())
    assert coll.embed_dim == 640 and coll.embed_model.startswith("gemma-3-270m")
    assert sample_qa.check()[0].ok


def test_reingest_is_a_noop_and_a_changed_file_replaces_its_chunks(qa_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(SAMPLE_DOCS / "operations_handbook.md", folder)
    qa = qa_factory()
    first = qa.ingest([folder])
    assert first.as_dict()["added"] == 1
    assert first.as_dict()["tokens_embedded"] >= first.files[0].tokens // 2 > 0  # another tokenizer, same text
    again = qa.ingest([folder])
    assert again.as_dict()["unchanged"] == 1 and again.as_dict()["chunks"] == 0
    assert again.tokens_embedded == 0

    old_ids = set(qa.store.chunk_ids(qa.collection().id).tolist())
    (folder / "operations_handbook.md").write_text("# Handbook\n\nThe backup retention is ninety days.\n")
    changed = qa.ingest([folder])
    assert changed.as_dict()["updated"] == 1
    new_ids = set(qa.store.chunk_ids(qa.collection().id).tolist())
    assert not (old_ids & new_ids)
    assert set(qa.indexes.get(qa.collection()).ids().tolist()) == new_ids
    assert [d.n_chunks for d in qa.documents()] == [1]


def test_same_bytes_read_another_way_are_ingested_again(qa_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Other chunk sizes, or a store written before docqa recorded how it read a file (an older reader),
    re-ingest an unchanged file instead of keeping its old chunks; the same way again is a no-op."""
    import sqlite3

    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(SAMPLE_DOCS / "operations_handbook.md", folder)
    data = tmp_path / "data"
    qa = qa_factory(data, with_embedder=False)
    assert qa.ingest([folder]).as_dict()["added"] == 1
    assert qa.ingest([folder]).as_dict()["unchanged"] == 1
    qa.store.close()

    smaller = qa_factory(data, with_embedder=False, chunking=ChunkingSettings(max_tokens=256, overlap_tokens=32))
    report = smaller.ingest([folder])
    assert report.as_dict()["updated"] == 1 and report.files[0].chunks > 1
    assert smaller.ingest([folder]).as_dict()["unchanged"] == 1
    smaller.store.close()

    with sqlite3.connect(data / "docqa.sqlite3") as conn:  # the store as an older docqa left it
        conn.execute("ALTER TABLE documents DROP COLUMN recipe")
        conn.execute("DROP TABLE alembic_version")  # a docqa before the column was also before Alembic
    old = qa_factory(data, with_embedder=False, chunking=ChunkingSettings(max_tokens=256, overlap_tokens=32))
    assert old.ingest([folder]).as_dict()["updated"] == 1
    assert old.ingest([folder]).as_dict()["unchanged"] == 1


def test_a_new_pdf_reader_reads_pdfs_again_and_leaves_text_files(  # type: ignore[no-untyped-def]
    qa_factory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PDF-only reader change (a new READER_VERSION) re-reads stored PDFs at the next ingest; text and
    Markdown files, whose reading did not change, stay as they were (with a real embedder: not embedded again)."""
    import ingest.readers

    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("operations_handbook.md", "annual_report_2025.pdf"):
        shutil.copy(SAMPLE_DOCS / name, folder)
    data = tmp_path / "data"
    qa = qa_factory(data, with_embedder=False)
    assert qa.ingest([folder]).as_dict()["added"] == 2
    monkeypatch.setattr(ingest.readers, "READER_VERSION", ingest.readers.READER_VERSION + 1)
    outcome = {Path(f.path).name: f.status for f in qa.ingest([folder]).files}
    assert outcome == {"operations_handbook.md": "unchanged", "annual_report_2025.pdf": "updated"}
    monkeypatch.setattr(ingest.readers, "TEXT_READER_VERSION", ingest.readers.TEXT_READER_VERSION + 1)
    outcome = {Path(f.path).name: f.status for f in qa.ingest([folder]).files}
    assert outcome == {"operations_handbook.md": "updated", "annual_report_2025.pdf": "unchanged"}


def test_broken_pdf_is_recorded_as_failed_and_the_rest_goes_on(qa_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(SAMPLE_DOCS / "operations_handbook.md", folder)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 100)
    (folder / "notes.xyz").write_text("skipped: not a document type")
    qa = qa_factory()
    report = qa.ingest([folder]).as_dict()
    assert report["added"] == 1
    assert [f["path"] for f in report["failed"]] == ["broken.pdf"]
    assert "PDF" in report["failed"][0]["error"]
    status = {d.name: (d.status, d.error) for d in qa.documents()}
    assert status["operations_handbook.md"] == ("ready", None)
    assert status["broken.pdf"][0] == "failed" and status["broken.pdf"][1]
    assert "notes.xyz" not in status


def test_delete_removes_rows_and_vectors(sample_qa) -> None:  # type: ignore[no-untyped-def]
    coll = sample_qa.collection()
    doc = next(d for d in sample_qa.documents() if d.name == "operations_handbook.md")
    chunk_ids = sample_qa.store.chunk_ids_of_document(doc.id)
    sample_qa.delete_document(doc.id)
    assert doc.id not in [d.id for d in sample_qa.documents()]
    assert not np.isin(chunk_ids, sample_qa.indexes.get(coll).ids()).any()
    assert sample_qa.check()[0].ok
    with pytest.raises(DocumentNotFoundError):
        sample_qa.delete_document(doc.id)


def test_bm25_only_ingest_works_without_an_embedder(qa_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    qa = qa_factory(with_embedder=False)
    report = qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"])
    assert report.as_dict()["added"] == 1 and report.embeddings is False and report.tokens_embedded == 0
    assert qa.collection().embed_model is None
    hits = qa.retriever.retrieve(qa.collection(), "governing law New York", 1)
    assert hits and "New York" in hits[0].text


def test_a_collection_refuses_a_different_embedding_model(sample_qa) -> None:  # type: ignore[no-untyped-def]
    sample_qa.store.set_embedder(sample_qa.collection().id, "some-other-model.gguf#1", 640)
    with pytest.raises(EmbeddingModelMismatchError, match="some-other-model"):
        sample_qa.ingest([SAMPLE_DOCS / "operations_handbook.md"])


def test_embedder_direct_path_and_gpu_padding_keep_the_vectors(tiny_qwen3: Path) -> None:
    """docqa embeds pre-tokenised texts through llama.cpp's batch directly, and on a GPU pads each
    batch with a throw-away sequence; neither may change a vector (checked here on the CPU)."""
    import llama_cpp
    import numpy as np

    # the output bound high enough for the 1,500-token text in one piece, as the reference reads it (with the
    # default bound, Qwen's vocabulary splits it: tests/llama/test_embedder_memory.py)
    embedder = LlamaEmbedder(tiny_qwen3, EmbedSettings(n_ctx=2048, max_output_mb=4096))
    texts = ["short one", "termination for convenience on 30 days notice", "word " * 1500, "中文合同条款"]
    # the reference: llama-cpp-python's own embedding path, on a context of its own
    llm = llama_cpp.Llama(
        str(tiny_qwen3),
        embedding=True,
        n_ctx=2048,
        n_batch=2048,
        n_ubatch=2048,
        pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
        verbose=False,
    )
    reference = l2_normalise(np.asarray(llm.embed(texts, normalize=False), dtype=np.float32))
    assert embedder.pad_multiple == 1  # no GPU here: padding would only cost time
    direct = embedder.embed_documents(texts)
    embedder.pad_multiple = 256
    padded = embedder.embed_documents(texts)
    assert np.abs(direct - reference).max() < 1e-4
    assert np.abs(padded - direct).max() < 1e-4
    assert np.abs(direct[0] - direct[1]).max() > 1e-3  # different texts, different vectors


def test_last_token_embedder_runs_long_texts_in_micro_batches_with_the_same_vectors(tiny_qwen3: Path) -> None:
    """A causal, last-token-pooling embedder (Qwen3-Embedding's kind) may run a long text through
    llama.cpp in 512-token micro-batches (a smaller compute buffer); the vectors must equal those of
    one piece."""
    import numpy as np

    texts = ["short one", "termination for convenience on 30 days notice " * 90, "word " * 1500, "中文合同条款"]
    piecewise = LlamaEmbedder(tiny_qwen3, EmbedSettings(n_ctx=2048, pooling="last", micro_batch=512))
    whole = LlamaEmbedder(tiny_qwen3, EmbedSettings(n_ctx=2048, pooling="last"))
    assert (piecewise.micro_batch, whole.micro_batch) == (512, 2048)
    assert piecewise.count_tokens(texts[2]) > 1024  # this text spans three micro-batches
    pieces, one = piecewise.embed_documents(texts), whole.embed_documents(texts)
    assert np.abs(pieces - one).max() < 1e-4
    assert np.abs(one[1] - one[2]).max() > 1e-3  # different texts, different vectors


def test_last_token_embedder_prefills_without_outputs_and_keeps_the_vectors(tiny_qwen3: Path) -> None:
    """A last-token embedder runs all but each text's last token as a prefill without outputs (no
    logits over the vocabulary), then the last tokens: the vectors must equal those of llama.cpp's
    embedding mode, where every token is an output. Mean pooling needs every token, so not there."""
    import numpy as np

    texts = ["short one", "a", "termination for convenience on 30 days notice " * 40, "中文合同条款"]
    embedder = LlamaEmbedder(tiny_qwen3, EmbedSettings(n_ctx=2048, pooling="last", batch_tokens=4096))
    assert embedder.prefill_without_outputs is True
    prefilled = embedder.embed_documents(texts)  # one batch of four sequences
    one_by_one = np.vstack([embedder.embed_documents([t]) for t in texts])
    every = LlamaEmbedder(tiny_qwen3, EmbedSettings(n_ctx=2048, pooling="last", last_token_only=False))
    assert every.prefill_without_outputs is False
    every_token = every.embed_documents(texts)
    assert np.abs(prefilled - every_token).max() < 1e-4
    assert np.abs(one_by_one - every_token).max() < 1e-4
    assert np.abs(prefilled[0] - prefilled[2]).max() > 1e-3  # different texts, different vectors
    mean = LlamaEmbedder(tiny_qwen3, EmbedSettings(n_ctx=2048, pooling="mean"))
    assert mean.prefill_without_outputs is False


def test_mean_pooling_embedder_refuses_micro_batches_that_would_cut_a_text(tiny_qwen3: Path) -> None:
    """Mean pooling of a text cut in pieces would average its last piece only: a clear error instead."""

    assert LlamaEmbedder(tiny_qwen3, EmbedSettings(n_ctx=1024, pooling="mean")).micro_batch == 1024
    with pytest.raises(ConfigError, match=r"micro_batch 256 is below embed\.n_ctx 1024"):
        LlamaEmbedder(tiny_qwen3, EmbedSettings(n_ctx=1024, pooling="mean", micro_batch=256))


def test_auto_retrieval_searches_by_keyword_and_loads_no_embedder(tiny_qwen3: Path, tmp_path: Path) -> None:
    """`auto` is BM25, the best on CUAD with every embedding model measured (the demo model, and
    all-MiniLM-L6-v2: hybrid 0.963 against 0.974 at recall@3 on 40 contracts): a configured embedding
    model is loaded only for hybrid or dense, so ingest does not spend hours on unsearched vectors."""

    declared = build_tiny_qwen3(QWEN_VOCAB, tmp_path / "embedding.gguf", pooling_type=3)
    embed = EmbedSettings(model=declared, n_ctx=512)
    kinds: tuple[tuple[Literal["auto", "bm25", "hybrid", "dense"], bool], ...] = (
        ("auto", False),
        ("bm25", False),
        ("hybrid", True),
        ("dense", True),
    )
    for kind, loaded in kinds:
        settings = make_settings(tmp_path / kind, embed=embed, retrieval=RetrievalSettings(retriever=kind))
        with DocQA.open(settings, generator=False) as qa:
            assert (qa.embedder is not None) is loaded, kind
    assert Retriever.resolve("auto") == "bm25" and Retriever.resolve("dense") == "dense"
    assert LlamaEmbedder(declared, embed).micro_batch == 512
    # An early Qwen3-Embedding GGUF declared no pooling: its name tells, and it pools its last token
    # (mean pooling would refuse micro-batches below the context).
    named = build_tiny_qwen3(QWEN_VOCAB, tmp_path / "named.gguf", name="Qwen3-Embedding-Tiny")
    early = LlamaEmbedder(named, EmbedSettings(n_ctx=1024, micro_batch=256))
    assert early.micro_batch == 256
    assert early.query_instruction.startswith("Instruct:")


def _bert_reference(folder: Path, ids: list[int]) -> Any:
    """all-MiniLM's forward pass in numpy (embeddings, post-norm encoder layers, mean of the tokens)."""
    import math

    w = read_safetensors(folder / "model.safetensors")
    heads = 2

    def norm(x: Any, name: str) -> Any:
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    def dense(x: Any, name: str) -> Any:
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
    x = norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    layer = "encoder.layer.0."
    q, k, v = (dense(x, layer + f"attention.self.{p}").reshape(n, heads, -1) for p in ("query", "key", "value"))
    scores = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(q.shape[-1])
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    attended = np.einsum("hqk,khd->qhd", weights, v).reshape(n, -1)
    x = norm(x + dense(attended, layer + "attention.output.dense"), layer + "attention.output.LayerNorm")
    hidden = dense(x, layer + "intermediate.dense")
    hidden = 0.5 * hidden * (1 + np.vectorize(math.erf)(hidden / math.sqrt(2)))
    x = norm(x + dense(hidden, layer + "output.dense"), layer + "output.LayerNorm")
    return x.mean(0)


def test_a_bert_embedder_embeds_long_texts_in_pieces_of_its_context(tmp_path: Path) -> None:
    """A BERT-style embedder (all-MiniLM, bge-small) has learned positions up to its training context
    (512): llama.cpp aborted the process on a longer chunk. Its texts go in wrapped pieces of that
    length, averaged by length, and the tail counts. Also checks bench/bert_gguf.py's conversion
    against the forward pass in numpy."""

    folder = write_tiny_bert(tmp_path / "tiny-bert", max_positions=32)
    embedder = LlamaEmbedder(write_bert_gguf(folder, tmp_path / "tiny-bert.gguf"), EmbedSettings(n_ctx=512))
    assert embedder.window == 32
    short = "the supplier shall terminate on notice"
    ids = embedder._tokenize(short)
    assert ids[0] == 2 and ids[-1] == 3  # [CLS] ... [SEP]
    reference = _bert_reference(folder, ids)
    assert np.abs(embedder.embed_documents([short])[0] - reference / np.linalg.norm(reference)).max() < 1e-3

    long = "the agreement shall be governed by the laws of new york " * 12
    windows = embedder._windows(long)
    assert len(windows) == 5 and all(len(w) <= 32 and w[0] == 2 and w[-1] == 3 for w in windows)
    body = list(embedder._model.tokenize(long.encode(), add_bos=False, special=False))
    assert [t for w in windows for t in w[1:-1]] == body
    vectors = embedder.embed_documents([short, long, long + " the supplier goods"])
    pieces = np.vstack([embedder._embed_tokens([w]) for w in windows])
    lengths = np.array([len(w) for w in windows], dtype=np.float64)
    assert np.abs(vectors[1] - l2_normalise((lengths @ pieces)[None, :])[0]).max() < 1e-4
    assert np.abs(vectors[1] - vectors[2]).max() > 1e-3  # the tail past the first pieces counts
    assert np.abs(embedder.embed_query(long) - vectors[1]).max() < 1e-4


def test_close_frees_the_models_open_loaded_and_leaves_handed_in_ones(tmp_path: Path) -> None:
    """DocQA.open() loads its models, so close() frees them (llama.cpp's model and context) and stops
    the keyword-search threads; an embedder handed to DocQA() stays the caller's, usable after."""

    gguf = write_bert_gguf(write_tiny_bert(tmp_path / "tiny-bert"), tmp_path / "tiny-bert.gguf")
    embed = EmbedSettings(model=gguf, n_ctx=512)
    settings = make_settings(tmp_path / "opened", embed=embed, retrieval=RetrievalSettings(retriever="hybrid"))
    qa = DocQA.open(settings, generator=False)
    assert qa.embedder is not None and qa.embedder.embed_query("the supplier").shape == (32,)
    loaded = qa.embedder
    qa.close()
    assert loaded._model.model is None and loaded._ctx.ctx is None  # type: ignore[attr-defined]
    assert qa.retriever._keyword_pool._shutdown

    mine = LlamaEmbedder(gguf, embed)
    with DocQA(make_settings(tmp_path / "handed", embed=embed), embedder=mine):
        pass
    assert mine.embed_query("the supplier").shape == (32,)
    mine.close()


def test_the_same_bytes_under_another_name_are_one_document(tmp_path: Path) -> None:
    """Issue 42, item 2: a byte-identical copy at another path, or twice in one run, became a second document."""
    folder = tmp_path / "contracts"
    (folder / "a").mkdir(parents=True)
    (folder / "b").mkdir()
    body = "The supplier ships the goods within ten days of each order."
    (folder / "a" / "supply.txt").write_text(body)
    (folder / "b" / "supply copy.txt").write_text(body)  # one run: met twice
    (folder / "b" / "other.txt").write_text("Disputes go to arbitration in Geneva.")
    with DocQA(make_settings(tmp_path / "data"), None, None) as qa:
        report = qa.ingest([folder])
        statuses = {f.path: (f.status, f.warnings) for f in report.files}
        twin = (folder / "a" / "supply.txt").resolve()  # named by its path: twins of one name are told apart
        assert statuses["supply copy.txt"] == ("unchanged", [f"same content as {twin}: not stored again"])
        assert sorted(d.name for d in qa.documents()) == ["other.txt", "supply.txt"]
        later = tmp_path / "later copy.txt"  # a later run: reported as the stored document
        shutil.copy(folder / "a" / "supply.txt", later)
        again = qa.ingest([later]).files[0]
        first = next(d for d in qa.documents() if d.name == "supply.txt")
        assert (again.status, again.document_id) == ("unchanged", first.id)
        assert again.warnings == [f"same content as {twin}: not stored again"]
        assert len(qa.documents()) == 2


def test_a_file_whose_twin_another_worker_stores_after_it_was_hashed_is_not_stored_again(tmp_path: Path) -> None:
    """Issue 42 item 2, the race as one worker sees it: the file was hashed and read while no document had
    its bytes, and another worker stored them before this one wrote. Before the check under the write
    lock: two documents."""
    body = "The supplier ships the goods within ten days of each order."
    (tmp_path / "mine.txt").write_text(body)
    (tmp_path / "theirs.txt").write_text(body)
    with DocQA(make_settings(tmp_path / "data"), None, None) as qa:
        store, save_document = qa.store, qa.store.save_document
        other_worker = DocQA(make_settings(tmp_path / "data"), None, None)

        def the_other_worker_first(**fields: Any) -> Any:
            other_worker.ingest([tmp_path / "theirs.txt"])
            return save_document(**fields)

        store.save_document = the_other_worker_first  # type: ignore[method-assign]
        result = qa.ingest([tmp_path / "mine.txt"]).files[0]
        other_worker.close()
        theirs = (tmp_path / "theirs.txt").resolve()
        assert result.status == "unchanged", result
        assert result.warnings == [f"same content as {theirs}: not stored again"]
        assert [d.source for d in qa.documents()] == [str(theirs)]
        assert result.document_id == qa.documents()[0].id


def test_a_twin_is_named_by_where_it_came_from() -> None:
    from ingest.pipeline import same_content

    assert same_content("b.pdf", "upload:contract.pdf").warnings == [
        "same content as contract.pdf (uploaded): not stored again"
    ]
    assert same_content("b.pdf", "/srv/contracts/a.pdf").warnings == [
        "same content as /srv/contracts/a.pdf: not stored again"
    ]


def test_bm25_alone_reports_no_embedding_stage(tmp_path: Path) -> None:
    """Issue 62 item 10: a job without an embedder showed "embedding 0/156 pages" until it was done."""
    qa = DocQA(make_settings(tmp_path / "data"), None, None)
    stages: list[str] = []
    try:
        qa.ingest([SAMPLE_DOCS / "operations_handbook.md"], progress=lambda p: stages.append(p.stage))
    finally:
        qa.close()
    assert "embedding" not in stages and stages[-1] == "done", stages
