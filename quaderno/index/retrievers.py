"""Retrievers: query text in, ranked :class:`Hit` lists out.

One protocol, and one class per strategy: :class:`BM25Retriever`, :class:`DenseRetriever`,
:class:`HybridRetriever` (reciprocal-rank fusion), :class:`MultiKBRetriever` (several
knowledge bases, e.g. the missing-knowledge paper's "2-way retrieval": k/2 from each) and
:class:`CachedRetriever` (an LRU keyed on the index fingerprint, parameters and query).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from quaderno.errors import ConfigError
from quaderno.index.hits import Hit, reciprocal_rank_fusion
from quaderno.index.kb_index import KBIndex


@runtime_checkable
class Retriever(Protocol):
    """Finds the chunks most relevant to a query."""

    name: str

    @property
    def fingerprint(self) -> str: ...

    def retrieve(self, query: str, k: int = 5) -> list[Hit]: ...

    def retrieve_batch(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]: ...


def _check_k(k: int) -> None:
    if not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a positive integer, got {k!r}")


class _OneQuery:
    """``retrieve`` is a batch of one: every retriever here implements ``retrieve_batch``."""

    def retrieve(self, query: str, k: int = 5) -> list[Hit]:
        return self.retrieve_batch([query], k)[0]  # type: ignore[attr-defined]


class _IndexRetriever(_OneQuery):
    """Shared part of retrievers over one :class:`KBIndex`."""

    name = "index"

    def __init__(self, index: KBIndex) -> None:
        self.index = index

    @property
    def fingerprint(self) -> str:
        return f"{self.name}:{self.index.fingerprint}"

    def retrieve_batch(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        _check_k(k)
        if not queries:
            return []
        scores, positions = self._search(list(queries), k)
        return [self._hits(s, p) for s, p in zip(scores, positions)]

    def _search(self, queries: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _hits(self, scores: np.ndarray, positions: np.ndarray) -> list[Hit]:
        keep = [(float(s), int(p)) for s, p in zip(scores, positions) if p >= 0]
        chunks = self.index.kb.by_positions([p for _, p in keep])
        return [Hit(chunk=c, score=s, rank=i, retriever=self.name)
                for i, ((s, _), c) in enumerate(zip(keep, chunks), start=1)]


class BM25Retriever(_IndexRetriever):
    """Sparse lexical retrieval with BM25."""

    name = "bm25"

    def _search(self, queries: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.bm25.search(queries, k)


class DenseRetriever(_IndexRetriever):
    """Nearest neighbours of the query embedding in the index's vector store."""

    name = "dense"

    def _search(self, queries: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.dense_search(queries, k)


class HybridRetriever(_OneQuery):
    """Reciprocal-rank fusion of several retrievers over ``depth`` candidates each."""

    name = "hybrid"

    def __init__(self, retrievers: Sequence[Retriever], *, rrf_k: int = 60,
                 depth: int = 50) -> None:
        if len(retrievers) < 2:
            raise ConfigError(f"HybridRetriever needs at least 2 retrievers, got {len(retrievers)}")
        if rrf_k < 0:
            raise ConfigError(f"rrf_k must be non-negative, got {rrf_k}")
        _check_k(depth)
        self.retrievers = list(retrievers)
        self.rrf_k = rrf_k
        self.depth = depth

    @property
    def fingerprint(self) -> str:
        parts = ",".join(r.fingerprint for r in self.retrievers)
        return f"hybrid(rrf_k={self.rrf_k},depth={self.depth})[{parts}]"

    def retrieve_batch(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        _check_k(k)
        depth = max(k, self.depth)
        per_retriever = [r.retrieve_batch(queries, depth) for r in self.retrievers]
        return [reciprocal_rank_fusion([rankings[i] for rankings in per_retriever], k,
                                       rrf_k=self.rrf_k)
                for i in range(len(queries))]


class MultiKBRetriever(_OneQuery):
    """Search several knowledge bases with one query.

    ``split`` (default) takes ⌈k/n⌉ from each KB, interleaved by rank (the missing-knowledge
    paper's 2-way retrieval: k/2 from passages, k/2 from QA pairs); ``fuse`` ranks the
    union by reciprocal-rank fusion. Chunks with identical text (MD5) are kept once.
    """

    name = "multi"

    def __init__(self, retrievers: Sequence[Retriever], *, strategy: str = "split",
                 rrf_k: int = 60) -> None:
        if not retrievers:
            raise ConfigError("MultiKBRetriever needs at least one retriever")
        if strategy not in ("split", "fuse"):
            raise ConfigError(f"strategy must be 'split' or 'fuse', got {strategy!r}")
        self.retrievers = list(retrievers)
        self.strategy = strategy
        self.rrf_k = rrf_k

    @property
    def fingerprint(self) -> str:
        return f"multi({self.strategy})[{','.join(r.fingerprint for r in self.retrievers)}]"

    def retrieve_batch(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        _check_k(k)
        n = len(self.retrievers)
        per_kb = -(-k // n) if self.strategy == "split" else k
        results = [r.retrieve_batch(queries, per_kb) for r in self.retrievers]
        out = []
        for i in range(len(queries)):
            rankings = [res[i] for res in results]
            if self.strategy == "fuse":
                merged = reciprocal_rank_fusion(rankings, len(rankings) * k, rrf_k=self.rrf_k,
                                                name=self.name)
            else:
                merged = [hit for rank in range(per_kb) for ranking in rankings
                          if rank < len(ranking) for hit in [ranking[rank]]]
            out.append(_dedup(merged)[:k])
        return out


def _dedup(hits: list[Hit]) -> list[Hit]:
    seen: set[str] = set()
    kept = []
    for hit in hits:
        if hit.chunk.md5 not in seen:
            seen.add(hit.chunk.md5)
            kept.append(hit)
    return [h.model_copy(update={"rank": i}) for i, h in enumerate(kept, start=1)]


class CachedRetriever(_OneQuery):
    """An in-memory LRU in front of a retriever.

    The key is (retriever fingerprint, k, query): the fingerprint names the exact index
    build and retrieval parameters, so a rebuilt index or another mode never serves stale
    results.
    """

    def __init__(self, retriever: Retriever, maxsize: int = 10_000) -> None:
        if maxsize < 1:
            raise ConfigError(f"maxsize must be positive, got {maxsize}")
        self.retriever = retriever
        self.name = retriever.name
        self.maxsize = maxsize
        self._cache: OrderedDict[str, list[Hit]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def fingerprint(self) -> str:
        return self.retriever.fingerprint

    def _key(self, query: str, k: int) -> str:
        raw = f"{self.retriever.fingerprint}\0{k}\0{query}"
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    def retrieve_batch(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        keys = [self._key(q, k) for q in queries]
        out: dict[int, list[Hit]] = {}
        with self._lock:
            for i, key in enumerate(keys):
                if key in self._cache:
                    self._cache.move_to_end(key)
                    out[i] = self._cache[key]
                    self.hits += 1
        todo = [i for i in range(len(queries)) if i not in out]
        if todo:
            fresh = self.retriever.retrieve_batch([queries[i] for i in todo], k)
            with self._lock:
                for i, hits in zip(todo, fresh):
                    out[i] = hits
                    self._cache[keys[i]] = hits
                    self.misses += 1
                while len(self._cache) > self.maxsize:
                    self._cache.popitem(last=False)
        return [out[i] for i in range(len(queries))]


def kb_names(retriever: Retriever) -> list[str]:
    """The knowledge bases ``retriever`` searches, in order."""
    if isinstance(retriever, _IndexRetriever):
        return [retriever.index.kb.name]
    if isinstance(retriever, CachedRetriever):
        return kb_names(retriever.retriever)
    if isinstance(retriever, (HybridRetriever, MultiKBRetriever)):
        return list(dict.fromkeys(n for r in retriever.retrievers for n in kb_names(r)))
    return list(getattr(retriever, "kbs", []))


def for_kb(retriever: Retriever, kb: str) -> Retriever:
    """The part of ``retriever`` that searches knowledge base ``kb`` only (e.g. the QA-pair
    KB of a passages + QA-pairs retriever); ConfigError when it does not search ``kb``."""
    names = kb_names(retriever)
    if names == [kb]:
        return retriever
    if isinstance(retriever, CachedRetriever):
        return for_kb(retriever.retriever, kb)
    if isinstance(retriever, MultiKBRetriever):
        for part in retriever.retrievers:
            if kb in kb_names(part):
                return for_kb(part, kb)
    raise ConfigError(f"knowledge base {kb!r} is not searched by this retriever (it searches "
                      f"{', '.join(names) or 'no named knowledge base'})")
