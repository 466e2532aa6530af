"""A closed embedder refuses to embed with ModelClosedError: an ingest still running when the service
closed its models once called into llama.cpp's freed memory and crashed the process."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from docqa.core.errors import ModelClosedError
from docqa.core.settings import EmbedSettings
from docqa.llama.embedder import LlamaEmbedder
from docqa.llama.model_uses import ModelUses

pytestmark = pytest.mark.slow


def test_an_embedder_used_after_close_raises_model_closed(demo_model: Path) -> None:
    embedder = LlamaEmbedder(demo_model, EmbedSettings())
    assert embedder.embed_query("governing law").shape[0] > 0
    embedder.close()
    with pytest.raises(ModelClosedError, match="embedding model was closed"):
        embedder.embed_query("governing law")
    with pytest.raises(ModelClosedError):
        embedder.embed_documents(["Section 12. Governing law: Delaware."])


def test_closing_while_another_thread_embeds_ends_it_cleanly(demo_model: Path) -> None:
    """The texts are tokenised on a thread of their own while others are decoded: a close in the middle
    waits for both and the embedding stops with ModelClosedError (or ends first), never a crash."""
    embedder = LlamaEmbedder(demo_model, EmbedSettings(batch_tokens=256))
    texts = [f"Clause {i}: the supplier delivers crate {i} to the depot within {i} days." * 8 for i in range(200)]
    outcome: list[object] = []

    def embed() -> None:
        try:
            outcome.append(embedder.embed_documents(texts, on_batch=lambda done, _: started.set()))
        except ModelClosedError as exc:
            outcome.append(exc)

    started = threading.Event()
    thread = threading.Thread(target=embed)
    thread.start()
    assert started.wait(60)
    embedder.close()
    thread.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], (ModelClosedError, np.ndarray)), outcome


def test_close_waits_for_the_use_in_progress_and_refuses_later_ones() -> None:
    uses = ModelUses("test model")
    entered, release, closed = threading.Event(), threading.Event(), threading.Event()

    def running() -> None:
        with uses.use():
            entered.set()
            release.wait(10)

    worker = threading.Thread(target=running)
    worker.start()
    assert entered.wait(10)

    def close() -> None:
        uses.close()
        closed.set()

    closer = threading.Thread(target=close)
    closer.start()
    assert not closed.wait(0.3)  # the use in progress holds it
    release.set()
    assert closed.wait(10)
    with pytest.raises(ModelClosedError, match="the test model was closed"), uses.use():
        pass
    worker.join()
    closer.join()
