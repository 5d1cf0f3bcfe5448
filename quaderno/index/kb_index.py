"""Build and open the indexes of one knowledge base.

An index folder (managed by :class:`~quaderno.storage.VersionedDir`, so builds are
atomic) holds a manifest and up to two components::

    manifest.json   format version, KB name + fingerprint, components and their parameters
    bm25/           bm25s arrays and vocabulary
    dense/          vector store (FAISS file, or a Qdrant local-mode folder / remote collection)

Opening checks the format version, that the KB has not changed since the build
(:class:`StaleIndexError`) and that a given embedder is the one that built the vectors
(:class:`EmbedderMismatchError`).
"""

from __future__ import annotations

import logging
import resource
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from quaderno import __version__
from quaderno.corpus.kb import KnowledgeBase
from quaderno.errors import ConfigError, EmbedderMismatchError, NotFoundError, StaleIndexError
from quaderno.index.bm25 import BM25Index
from quaderno.index.embedders import Embedder, make_embedder
from quaderno.index.vectorstore import (FaissVectorStore, QdrantVectorStore, VectorStore,
                                        load_store)
from quaderno.storage import VersionedDir, read_manifest, write_json_atomic

log = logging.getLogger(__name__)

INDEX_FORMAT_VERSION = 1
STORE_KINDS = ("faiss-flat", "faiss-hnsw", "qdrant")


@dataclass(frozen=True)
class DenseConfig:
    """How to build the dense component."""

    store: str = "faiss-flat"
    metric: str = "ip"
    hnsw_m: int = 32
    ef_construction: int = 40
    ef_search: int = 64
    qdrant_url: str | None = None
    batch_size: int = 256

    def __post_init__(self) -> None:
        if self.store not in STORE_KINDS:
            raise ConfigError(f"store must be one of {', '.join(STORE_KINDS)}, got {self.store!r}")
        if self.metric not in ("ip", "l2"):
            raise ConfigError(f"metric must be 'ip' or 'l2', got {self.metric!r}")
        if self.batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {self.batch_size}")

    def make_store(self, dim: int, folder: Path, collection: str) -> VectorStore:
        if self.store == "qdrant":
            if self.qdrant_url:
                return QdrantVectorStore(dim, collection=collection, metric=self.metric,
                                         url=self.qdrant_url)
            return QdrantVectorStore(dim, collection=collection, metric=self.metric,
                                     path=folder / "qdrant")
        return FaissVectorStore(dim, kind=self.store.removeprefix("faiss-"), metric=self.metric,
                                hnsw_m=self.hnsw_m, ef_construction=self.ef_construction,
                                ef_search=self.ef_search)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_index(kb: KnowledgeBase, root: Path, *, bm25: bool = True,
                embedder: Embedder | None = None, dense: DenseConfig | None = None,
                bm25_params: dict[str, Any] | None = None,
                progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """Build the index of ``kb`` under ``root`` atomically; returns the manifest.

    ``embedder`` enables the dense component. Documents are read and embedded in
    batches, so memory holds one batch of text plus the vectors themselves.
    """
    if not bm25 and embedder is None:
        raise ConfigError("nothing to build: enable bm25 and/or give an embedder")
    dense = dense or DenseConfig()
    started = time.perf_counter()
    components: dict[str, Any] = {}
    timings: dict[str, float] = {}
    with VersionedDir(root).build() as folder:
        if bm25:
            t0 = time.perf_counter()
            index = BM25Index(**(bm25_params or {}))
            index.build(c.render() for c in _counted(kb, progress, "bm25"))
            components["bm25"] = index.save(folder / "bm25")
            timings["bm25_s"] = time.perf_counter() - t0
        if embedder is not None:
            t0 = time.perf_counter()
            (folder / "dense").mkdir()
            collection = f"quaderno_{kb.name}_{kb.fingerprint[:12]}".replace(".", "_")
            store = dense.make_store(embedder.dim, folder / "dense", collection)
            done = 0
            for batch in kb.iter_batches(dense.batch_size):
                vectors = embedder.embed_documents([c.render() for c in batch])
                store.add(vectors)
                done += len(batch)
                if progress is not None:
                    progress("dense", done, len(kb))
            params = store.save(folder / "dense")
            components["dense"] = {**params, "embedder": embedder.spec, "dim": embedder.dim,
                                   "batch_size": dense.batch_size}
            timings["dense_s"] = time.perf_counter() - t0
        manifest = {
            "kind": "index",
            "format_version": INDEX_FORMAT_VERSION,
            "quaderno_version": __version__,
            "kb": kb.name,
            "kb_fingerprint": kb.fingerprint,
            "num_chunks": len(kb),
            "components": components,
            "build": {**timings, "total_s": time.perf_counter() - started,
                      "peak_rss_mb": _peak_rss_mb(),
                      "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
        }
        write_json_atomic(folder / "manifest.json", manifest)
    log.info("built index of %s (%s) in %.1fs", kb.name, ", ".join(components),
             manifest["build"]["total_s"])
    return manifest


def _counted(kb: KnowledgeBase, progress: Callable[[str, int, int], None] | None, stage: str):
    done = 0
    for batch in kb.iter_batches(4096):
        yield from batch
        done += len(batch)
        if progress is not None:
            progress(stage, done, len(kb))


class KBIndex:
    """An opened index: the KB plus whichever components were built."""

    def __init__(self, kb: KnowledgeBase, root: Path, *, embedder: Embedder | None = None,
                 embedder_factory: Callable[[str], Embedder] = make_embedder) -> None:
        folder = VersionedDir(root).current()
        if folder is None:
            raise NotFoundError(
                f"knowledge base {kb.name!r} has no index at {root}; "
                f"build one with: quaderno index build {kb.name}")
        self.kb = kb
        self.folder = folder
        self.manifest = read_manifest(folder / "manifest.json", kind="index",
                                      format_version=INDEX_FORMAT_VERSION)
        if self.manifest["kb_fingerprint"] != kb.fingerprint:
            raise StaleIndexError(
                f"the index of {kb.name!r} was built over other content than the knowledge "
                f"base now holds; rebuild it with: quaderno index build {kb.name}")
        self._embedder = embedder
        self._embedder_factory = embedder_factory
        self._bm25: BM25Index | None = None
        self._store: VectorStore | None = None
        # components load on first use, possibly from several retrieval threads at once
        # (episodes search in worker threads): one loader at a time (Qdrant's local mode
        # refuses a second client on the same folder)
        self._loading = threading.RLock()
        dense = self.manifest["components"].get("dense")
        if dense is not None and embedder is not None:
            self._check_embedder(embedder, dense)

    @property
    def fingerprint(self) -> str:
        """Identifies this exact build (used in retrieval cache keys)."""
        return f"{self.kb.fingerprint[:16]}:{self.folder.name}"

    @property
    def components(self) -> list[str]:
        return sorted(self.manifest["components"])

    @staticmethod
    def _check_embedder(embedder: Embedder, dense: dict[str, Any]) -> None:
        if embedder.spec != dense["embedder"] or embedder.dim != dense["dim"]:
            raise EmbedderMismatchError(
                f"this index was built with embedder {dense['embedder']!r} (dim {dense['dim']}), "
                f"not {embedder.spec!r} (dim {embedder.dim}); query it with the same embedder "
                "or rebuild the index")

    @property
    def bm25(self) -> BM25Index:
        with self._loading:
            return self._bm25 if self._bm25 is not None else self._load_bm25()

    def _load_bm25(self) -> BM25Index:
        if self._bm25 is None:
            params = self.manifest["components"].get("bm25")
            if params is None:
                raise NotFoundError(
                    f"the index of {self.kb.name!r} has no BM25 component; rebuild with --bm25")
            self._bm25 = BM25Index.load(self.folder / "bm25", params)
        return self._bm25

    @property
    def embedder(self) -> Embedder:
        with self._loading:
            if self._embedder is None:
                embedder = self._embedder_factory(self._dense_params()["embedder"])
                self._check_embedder(embedder, self._dense_params())
                self._embedder = embedder
            return self._embedder

    def _dense_params(self) -> dict[str, Any]:
        params = self.manifest["components"].get("dense")
        if params is None:
            raise NotFoundError(
                f"the index of {self.kb.name!r} has no dense component; rebuild it with an "
                "embedder (--embedder minilm)")
        return params

    @property
    def store(self) -> VectorStore:
        with self._loading:
            if self._store is None:
                self._store = load_store(self.folder / "dense", self._dense_params())
            return self._store

    def dense_search(self, queries: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        vectors = self.embedder.embed_queries(queries)
        return self.store.search(vectors, k)
