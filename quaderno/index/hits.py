"""What a retriever returns, and reciprocal-rank fusion of several rankings."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from quaderno.corpus.chunk import Chunk


class Hit(BaseModel):
    """One retrieved chunk with its score and 1-based rank under the retriever that found it."""

    model_config = ConfigDict(frozen=True)

    chunk: Chunk
    score: float
    rank: int
    retriever: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.chunk.kb, self.chunk.id)


def reciprocal_rank_fusion(rankings: Sequence[Sequence[Hit]], k: int, *, rrf_k: int = 60,
                           name: str = "hybrid") -> list[Hit]:
    """Fuse rankings: score(d) = Σ 1 / (rrf_k + rank_r(d)) (Cormack et al., 2009).

    Ties are broken by the best single rank, then by first appearance, so the result is
    deterministic.
    """
    if rrf_k < 0:
        raise ValueError(f"rrf_k must be non-negative, got {rrf_k}")
    scores: dict[tuple[str, str], float] = {}
    best: dict[tuple[str, str], int] = {}
    first: dict[tuple[str, str], Hit] = {}
    for ranking in rankings:
        for hit in ranking:
            key = hit.key
            scores[key] = scores.get(key, 0.0) + 1.0 / (rrf_k + hit.rank)
            best[key] = min(best.get(key, hit.rank), hit.rank)
            first.setdefault(key, hit)
    order = sorted(scores, key=lambda key: (-scores[key], best[key]))
    return [Hit(chunk=first[key].chunk, score=scores[key], rank=i, retriever=name)
            for i, key in enumerate(order[:k], start=1)]
