"""Vector indexes: FAISS behind the `VectorIndex` protocol (docqa.core.protocols).

One exhaustive inner-product index per collection (vectors are L2-normalised, so inner product is
cosine), with FAISS IDs equal to SQLite chunk IDs. Vectors are held as float16: the exhaustive scan
reads half the memory (100k x 1,024 dims on 2 cores: p50 68 -> 32 ms, see docs/benchmarks/retrieval.md); the
top-10 results matched float32's in that test, and rounding can only swap near-ties.

FAISS scans a flat index on one thread for a single query (it spreads work over queries), so the
vectors sit in SHARDS inverted lists of an IVF index that is searched whole (nprobe = every list)
with the lists spread over threads: still exhaustive and exact, the same results as a flat scan,
but 100k x 1,024 on 2 cores takes 11 ms instead of 18-21. A vector's list is the nearest of SHARDS
fixed random directions: nothing to train, and the lists come out about equal. Files written by
earlier versions (one flat index, float32 or float16) load and are converted; the next save writes
the new form. Files are written atomically: a temporary file in the same folder, fsync, rename,
fsync of the folder. A crash mid-save leaves the previous file intact.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import faiss

logger = logging.getLogger(__name__)


def _faiss() -> ModuleType:
    """FAISS, imported when an index is first made or read: a process that never searches by vector (a
    generation node, keyword search alone) never loads its native library."""
    import faiss

    return faiss


class IndexFileError(Exception):
    """The index file is missing, truncated or not a FAISS index."""


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What changes when a file is written again (write_atomically replaces it: a new inode)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


SHARDS = 16  # inverted lists, searched in parallel; more than the cores of most machines
# A search leaves one core to the keyword search that runs beside it (hybrid retrieval): on 2 cores, two
# FAISS threads and SQLite's took longer than one FAISS thread (100k chunks, p50 43 against 36 ms).
_SEARCH_THREADS = max(1, (os.cpu_count() or 1) - 1)


def new_faiss_index(dim: int) -> Any:
    """An exhaustive float16 inner-product index in SHARDS lists (see the module docstring)."""
    directions = np.random.default_rng(0).standard_normal((SHARDS, dim)).astype(np.float32)
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    quantizer = _faiss().IndexFlatIP(dim)
    quantizer.add(directions)
    index = _faiss().IndexIVFScalarQuantizer(
        quantizer, dim, SHARDS, _faiss().ScalarQuantizer.QT_fp16, _faiss().METRIC_INNER_PRODUCT, False
    )
    index.train(directions)  # the lists are fixed already; float16 needs no training either
    return _searching_every_list(index)


def _searching_every_list(index: Any) -> Any:
    index.nprobe = index.nlist
    index.parallel_mode = 1  # one query's lists over the threads (mode 0 spreads queries only)
    return index


def _converted(old: Any, dim: int) -> Any:
    """An index written by an earlier docqa (IndexIDMap2 over a flat index) in the sharded form."""
    index = new_faiss_index(dim)
    if old.ntotal:
        inner = _faiss().downcast_index(old.index)
        index.add_with_ids(inner.reconstruct_n(0, old.ntotal), _faiss().vector_to_array(old.id_map).astype(np.int64))
    return index


class FaissIndex:
    """A thread-safe exhaustive float16 FAISS index (SHARDS inverted lists), persisted to one file."""

    def __init__(self, path: Path, dim: int, index: faiss.Index | None = None) -> None:
        self.path = path
        self.dim = dim
        # Any: faiss's SWIG signatures do not describe the numpy overloads its Python layer adds.
        self._index: Any = index if index is not None else new_faiss_index(dim)
        self._lock = threading.RLock()
        self._dirty = index is None
        self._stamp = _stamp(path)  # the file as this process last read or wrote it

    @classmethod
    def load(cls, path: Path, dim: int) -> FaissIndex:
        if not path.is_file():
            raise IndexFileError(f"no index file at {path.name}")
        try:
            raw = np.fromfile(path, dtype=np.uint8)
            index = _faiss().deserialize_index(raw)
        except Exception as exc:  # FAISS raises RuntimeError with C++ text on bad files
            raise IndexFileError(f"{path.name} is not a readable FAISS index ({exc})") from exc
        if index.d != dim:
            raise IndexFileError(f"{path.name} holds {index.d}-d vectors, expected {dim}")
        if isinstance(index, _faiss().IndexIDMap2):
            converted = cls(path, dim, _converted(index, dim))
            converted._dirty = True
            return converted
        if not isinstance(index, _faiss().IndexIVFScalarQuantizer):
            raise IndexFileError(f"{path.name} holds a {type(index).__name__}, not a docqa index")
        return cls(path, dim, _searching_every_list(index))

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        if len(ids) == 0:
            return
        vecs = np.ascontiguousarray(vectors, dtype=np.float32)
        if vecs.shape != (len(ids), self.dim):
            raise ValueError(f"expected {len(ids)} vectors of {self.dim} dims, got {vecs.shape}")
        with self._lock:
            self._index.add_with_ids(vecs, np.ascontiguousarray(ids, dtype=np.int64))
            self._dirty = True

    def remove(self, ids: np.ndarray) -> None:
        if len(ids) == 0:
            return
        with self._lock:
            self._index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))
            self._dirty = True

    def search(self, query: np.ndarray, k: int, allowed_ids: np.ndarray | None = None) -> list[tuple[int, float]]:
        q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        _faiss().omp_set_num_threads(_SEARCH_THREADS)  # OpenMP's setting is per calling thread
        with self._lock:
            if self._index.ntotal == 0:
                return []
            k = min(k, self._index.ntotal)
            if allowed_ids is not None:
                # keep the selector referenced from Python while C++ uses it
                selector = _faiss().IDSelectorBatch(np.ascontiguousarray(allowed_ids, dtype=np.int64))
                params = _faiss().SearchParametersIVF()
                params.sel, params.nprobe = selector, self._index.nlist
                scores, ids = self._index.search(q, k, params=params)
            else:
                scores, ids = self._index.search(q, k)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    def ids(self) -> np.ndarray:
        with self._lock:
            lists = self._index.invlists
            parts = [
                _faiss().rev_swig_ptr(lists.get_ids(n), lists.list_size(n)).copy()
                for n in range(self._index.nlist)
                if lists.list_size(n)
            ]
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def changed_on_disk(self) -> bool:
        """Whether another process wrote the file since this one read or wrote it."""
        return _stamp(self.path) != self._stamp

    def save(self) -> None:
        # Serialising and writing under one lock keeps two concurrent saves from landing out of order.
        with self._lock:
            if not self._dirty and self.path.exists():
                return
            write_atomically(self.path, _faiss().serialize_index(self._index).tobytes())
            self._dirty = False
            self._stamp = _stamp(self.path)
        logger.debug("saved %s (%d vectors)", self.path.name, len(self))
