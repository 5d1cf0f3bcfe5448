"""Sparse retrieval: BM25 over a knowledge base, through bm25s.

Tokens are lower-cased words with English stop words removed and Snowball stemming
(PyStemmer), the same pipeline for documents and queries. The vocabulary is saved next to
the index, so a reloaded index tokenizes queries exactly as it tokenized the corpus.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from quaderno.errors import ConfigError

log = logging.getLogger(__name__)

METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


def _quiet_bm25s() -> None:
    """bm25s sets its own logger to DEBUG at import; hand the level back to the root logger."""
    logging.getLogger("bm25s").setLevel(logging.NOTSET)


def _backend() -> str:
    """numba's top-k is ~5x faster than numpy's at 10^5-10^6 documents; use it when installed."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return "numpy"
    return "numba"


def make_tokenizer(stem: bool = True, stopwords: str | None = "en"):  # noqa: ANN201
    """The bm25s tokenizer used for both documents and queries."""
    import bm25s.tokenization
    import Stemmer

    stemmer = Stemmer.Stemmer("english").stemWord if stem else None
    return bm25s.tokenization.Tokenizer(stemmer=stemmer, stopwords=stopwords or [],
                                        lower=True)


class BM25Index:
    """BM25 scores precomputed into a sparse matrix (bm25s); queries cost one sparse lookup."""

    def __init__(self, *, method: str = "lucene", k1: float = 1.5, b: float = 0.75,
                 delta: float = 0.5, stem: bool = True, stopwords: str | None = "en") -> None:
        if method not in METHODS:
            raise ConfigError(f"BM25 method must be one of {', '.join(METHODS)}, got {method!r}")
        if k1 < 0:
            raise ConfigError(f"k1 must be non-negative, got {k1}")
        if not 0 <= b <= 1:
            raise ConfigError(f"b must be in [0, 1], got {b}")
        self.params: dict[str, Any] = {"method": method, "k1": k1, "b": b, "delta": delta,
                                       "stem": stem, "stopwords": stopwords}
        self.tokenizer = make_tokenizer(stem, stopwords)
        self._bm25: Any = None
        self.num_docs = 0

    def build(self, texts: Iterable[str]) -> None:
        """Index texts in order (position i = i-th text)."""
        import bm25s

        _quiet_bm25s()
        ids = self.tokenizer.tokenize(list(texts), return_as="ids", show_progress=False)
        self.num_docs = len(ids)
        p = self.params
        self._bm25 = bm25s.BM25(method=p["method"], k1=p["k1"], b=p["b"], delta=p["delta"],
                                backend=_backend())
        self._bm25.index(ids, show_progress=False)

    def _query_ids(self, queries: Sequence[str]) -> list[list[int]]:
        return self.tokenizer.tokenize(list(queries), return_as="ids", update_vocab=False,
                                       show_progress=False)

    def search(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, positions) per query; rows padded with position -1 and score 0."""
        if self._bm25 is None:
            raise ConfigError("BM25 index is empty: build() or load() it first")
        n = len(queries)
        k_eff = min(k, self.num_docs)
        scores = np.zeros((n, k), dtype=np.float32)
        positions = np.full((n, k), -1, dtype=np.int64)
        for row, qids in enumerate(self._query_ids(queries)):
            qids = [t for t in qids if t in self._known]
            if not qids or k_eff == 0:
                continue
            pos, sc = self._bm25.retrieve([qids], k=k_eff, show_progress=False, n_threads=1)
            keep = sc[0] > 0
            m = int(keep.sum())
            positions[row, :m] = pos[0][keep]
            scores[row, :m] = sc[0][keep]
        return scores, positions

    @property
    def _known(self) -> set[int]:
        cached = getattr(self, "_known_ids", None)
        if cached is None:
            cached = self._known_ids = set(self._bm25.vocab_dict.values())
        return cached

    def get_scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for one query (for checks against a reference)."""
        qids = [t for t in self._query_ids([query])[0] if t in self._known]
        return self._bm25.get_scores(qids) if qids else np.zeros(self.num_docs, np.float32)

    def save(self, folder: Path) -> dict[str, Any]:
        folder.mkdir(parents=True, exist_ok=True)
        self._bm25.save(str(folder))
        self.tokenizer.save_vocab(save_dir=str(folder))
        return {**self.params, "num_docs": self.num_docs}

    @classmethod
    def load(cls, folder: Path, params: dict[str, Any]) -> BM25Index:
        import bm25s

        _quiet_bm25s()
        index = cls(method=params["method"], k1=params["k1"], b=params["b"],
                    delta=params["delta"], stem=params["stem"], stopwords=params["stopwords"])
        index._bm25 = bm25s.BM25.load(str(folder), mmap=False)
        index._bm25.backend = _backend()
        index.tokenizer.load_vocab(str(folder))
        index.num_docs = int(params["num_docs"])
        return index
