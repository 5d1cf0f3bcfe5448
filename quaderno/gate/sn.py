"""SN, the "Siamese network" of CCSK §3.2: similar historical questions vote (Eq. 1–2).

One shared (frozen) encoder φ embeds the new question and every memory question; the
similarity is their cosine (Eq. 1). The K = 5 most similar memory questions vote:
F_SN = (1/K) Σ y_(k) (Eq. 2), unweighted (K = the neighbours used when the memory holds
fewer). When even the nearest one is less similar than
θ_new the question is novel and F_SN = 1 (retrieve; SN3). The paper gives no θ_new; it is
calibrated here as the 5th percentile of the memory's own leave-one-out max-similarity
(REC SN3). A memory question is scored without itself (leave-one-out, SN5), at training and at
inference alike: a query never votes with a memory item whose normalized question equals it.

The memory holds ``ir_better`` and ``ir_worse`` questions only (``drop_same``: SKR's
knn.py) or every label (``all``: FlashRAG's judger). SKR's and FlashRAG's own rules read
the same neighbours (:func:`skr_rule`, :func:`flashrag_rule`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from quaderno.errors import ConfigError
from quaderno.gate.labels import LabelRecord, label_to_y, normalize_question
from quaderno.index.embedders import Embedder, _normalize

MemoryMode = Literal["drop_same", "all"]


@dataclass(frozen=True)
class SNScore:
    """SN's view of one question."""

    f_sn: float
    max_sim: float
    novelty_fired: bool
    neighbours: list[int]  # memory indices, most similar first
    better: int  # ir_better among the neighbours
    worse: int  # ir_worse among the neighbours
    left_out: tuple[int, ...] = ()  # memory items equal to the query, kept from voting (LOO)


class SimilarQueries:
    """The SN memory and its kNN vote."""

    def __init__(self, embedder: Embedder, *, k: int = 5, memory: MemoryMode = "drop_same",
                 novelty: bool = True, novelty_percentile: float = 5.0,
                 theta_new: float | None = None) -> None:
        if k < 1:
            raise ConfigError(f"SN k must be at least 1, got {k}")
        if memory not in ("drop_same", "all"):
            raise ConfigError(f"SN memory must be 'drop_same' or 'all', got {memory!r}")
        if not 0 <= novelty_percentile <= 100:
            raise ConfigError(f"novelty_percentile must be in [0, 100], got {novelty_percentile}")
        self.embedder, self.k, self.memory = embedder, k, memory
        self.novelty, self.novelty_percentile, self.theta_new = novelty, novelty_percentile, \
            theta_new
        self.questions: list[str] = []
        self.judgements: list[str] = []
        self.sources: list[str] = []
        self.vectors = np.zeros((0, embedder.dim), dtype=np.float32)
        self._keys: dict[str, list[int]] = {}  # normalized question → memory indices
        # SKR's rule compares with the balance of the whole labelled set, same included
        self.train_better = self.train_worse = self.train_total = 0

    # -- building -----------------------------------------------------------------------
    def fit(self, records: Sequence[LabelRecord], vectors: np.ndarray | None = None
            ) -> SimilarQueries:
        """Fill the memory from labelled records (their vectors, when already embedded) and
        calibrate θ_new unless it was given."""
        judged = [r.labelled() for r in records]
        self.train_better = judged.count("ir_better")
        self.train_worse = judged.count("ir_worse")
        self.train_total = len(judged)
        keep = [i for i, j in enumerate(judged) if self.memory == "all" or j != "same"]
        if not keep:
            raise ConfigError("the SN memory is empty: no ir_better or ir_worse label among "
                              f"{len(records)} records (use memory='all' or more labels)")
        self.questions = [records[i].question for i in keep]
        self.judgements = [judged[i] for i in keep]
        self.sources = [records[i].source for i in keep]
        self._keys: dict[str, list[int]] = {}
        for i, q in enumerate(self.questions):
            self._keys.setdefault(normalize_question(q), []).append(i)
        vecs = vectors[keep] if vectors is not None else self.embedder.embed_queries(
            self.questions)
        self.vectors = _normalize(np.asarray(vecs, dtype=np.float32))
        if self.theta_new is None and self.novelty:
            self.theta_new = self.calibrate()
        return self

    @property
    def y(self) -> np.ndarray:
        return np.array([label_to_y(j) for j in self.judgements], dtype=np.float32)

    def calibrate(self) -> float:
        """θ_new: the ``novelty_percentile``-th percentile of the leave-one-out max-similarity
        of the memory questions."""
        if len(self.questions) < 2:
            return -1.0
        sims = self.vectors @ self.vectors.T
        np.fill_diagonal(sims, -np.inf)
        return float(np.percentile(sims.max(axis=1), self.novelty_percentile))

    # -- scoring ------------------------------------------------------------------------
    def self_matches(self, questions: Sequence[str]) -> list[list[int]]:
        """Per question, the memory items whose normalized question equals it."""
        return [list(self._keys.get(normalize_question(q), [])) for q in questions]

    def score_vectors(self, vectors: np.ndarray,
                      exclude: Sequence[int | Sequence[int] | None] | None = None,
                      questions: Sequence[str] | None = None) -> list[SNScore]:
        """Scores for query vectors; ``exclude[i]`` is a memory index (or indices) left out
        for query i (leave-one-out when the query is that memory question). With
        ``questions`` (the queries' text) every memory item whose normalized question
        equals the query is left out too: a question never votes for itself."""
        if not len(self.questions):
            raise ConfigError("SN has no memory: fit it on labelled records first")
        sims = _normalize(np.asarray(vectors, dtype=np.float32)) @ self.vectors.T
        n = len(sims)
        drop: list[set[int]] = [set() for _ in range(n)]
        if exclude is not None:
            for i, j in enumerate(exclude):
                if j is not None:
                    drop[i].update([j] if isinstance(j, (int, np.integer)) else j)
        if questions is not None:
            if len(questions) != n:
                raise ConfigError(f"{n} query vectors but {len(questions)} questions")
            for i, same in enumerate(self.self_matches(questions)):
                drop[i].update(same)
        y = self.y
        out = []
        for row, left in zip(sims, drop):
            if left:
                row[sorted(left)] = -np.inf
            k = min(self.k, len(self.questions) - len(left))
            if k < 1:
                raise ConfigError("the SN memory holds nothing but the question itself: "
                                  "add labels of other questions")
            top = np.argsort(-row, kind="stable")[:k]
            max_sim = float(row[top[0]])
            fired = bool(self.novelty and self.theta_new is not None and max_sim < self.theta_new)
            # Eq. 2 over the neighbours actually used (fewer than K in a small memory)
            f_sn = 1.0 if fired else float(y[top].sum()) / len(top)
            judged = [self.judgements[i] for i in top]
            out.append(SNScore(f_sn=f_sn, max_sim=max_sim, novelty_fired=fired,
                               neighbours=[int(i) for i in top],
                               better=judged.count("ir_better"), worse=judged.count("ir_worse"),
                               left_out=tuple(sorted(left)) if questions is not None else ()))
        return out

    def notes(self, s: SNScore) -> list[str]:
        """What a decision should say about SN's view (leave-one-out at inference)."""
        if not s.left_out:
            return []
        labels = ", ".join(f"{self.judgements[i]} from {self.sources[i] or 'labels'}"
                           for i in s.left_out)
        return [f"leave-one-out: the question itself is in the SN memory ({labels}); it "
                "did not vote"]

    def score(self, questions: Sequence[str]) -> list[SNScore]:
        return self.score_vectors(self.embedder.embed_queries(list(questions)),
                                  questions=questions)

    def loo(self) -> list[SNScore]:
        """Every memory question scored without itself (SN5)."""
        return self.score_vectors(self.vectors, exclude=list(range(len(self.questions))))


def skr_rule(s: SNScore, *, k: int, train_better: int, train_worse: int, train_total: int) -> bool:
    """SKR's knn.py (THUNLP-MT/SKR), on a ``drop_same`` memory: with more ``ir_worse`` than
    ``ir_better`` in training (delta < 0), skip retrieval iff the neighbours hold more worse
    than better and by at least int(|delta|·k/N); mirrored when delta ≥ 0."""
    delta = train_better - train_worse
    margin = int(abs(delta) * k / max(train_total, 1))
    if delta < 0:
        return not (s.worse > s.better and s.worse - s.better >= margin)
    return s.better > s.worse and s.better - s.worse >= margin


def flashrag_rule(s: SNScore, *, k: int, train_better: int, train_worse: int,
                  train_total: int) -> bool:
    """FlashRAG's SKRJudger (flashrag/judger/judger.py) on an ``all`` memory: topk_delta =
    better − worse among the neighbours (``same`` counts for neither); with training
    delta < 0, no retrieval iff topk_delta < 0 and topk_delta ≤ int(delta·k/N), else retrieve
    (ties and all-``same`` neighbourhoods retrieve); with delta ≥ 0, retrieve iff topk_delta > 0
    and topk_delta ≥ int(delta·k/N)."""
    delta = train_better - train_worse
    bound = int(delta * k / max(train_total, 1))
    topk = s.better - s.worse
    if delta < 0:
        return not (topk < 0 and topk <= bound)
    return topk > 0 and topk >= bound


