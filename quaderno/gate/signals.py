"""The embeddings and sub-module scores every learned gate reads, computed once per batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from quaderno.gate.rqm import ResponseQuality, features
from quaderno.gate.sn import SimilarQueries, SNScore
from quaderno.index.embedders import Embedder


@dataclass
class Signals:
    q_vecs: np.ndarray
    r_vecs: np.ndarray
    sn: list[SNScore]
    f_rqm: np.ndarray  # nan where no RQM was asked for

    @property
    def f_sn(self) -> np.ndarray:
        return np.array([s.f_sn for s in self.sn], dtype=np.float32)


def embed_questions(embedder: Embedder, questions: Sequence[str], *, with_responses: bool
                    ) -> np.ndarray:
    """The question vectors :func:`compute` uses (documents-side when queries and documents
    embed alike and responses are embedded too), e.g. to embed them ahead of time."""
    if with_responses and _same_side(embedder):
        return embedder.embed_documents(list(questions))
    return embedder.embed_queries(list(questions))


def compute(embedder: Embedder, questions: Sequence[str], responses: Sequence[str], *,
            sn: SimilarQueries, rqm: ResponseQuality | None,
            q_vecs: np.ndarray | None = None) -> Signals:
    """``q_vecs``: the questions' vectors when already embedded (:func:`embed_questions`,
    e.g. while the closed-book answer was generated): only the responses are encoded."""
    n = len(questions)
    if q_vecs is not None:
        q = np.asarray(q_vecs, dtype=np.float32)
        r = embedder.embed_documents(list(responses)) if rqm is not None else np.zeros(
            (n, embedder.dim), dtype=np.float32)
    elif rqm is not None and _same_side(embedder):  # one encoder pass for both (the cost)
        both = embedder.embed_documents([*questions, *responses])
        q, r = both[:n], both[n:]
    else:
        q = embedder.embed_queries(list(questions))
        r = embedder.embed_documents(list(responses)) if rqm is not None else np.zeros(
            (n, embedder.dim), dtype=np.float32)
    f_rqm = (rqm.f_rqm(features(questions, responses, embedder, response_vecs=r,
                                question_vecs=q)) if rqm is not None
             else np.full(len(questions), np.nan))
    return Signals(q_vecs=q, r_vecs=r, sn=sn.score_vectors(q, questions=questions),
                   f_rqm=np.asarray(f_rqm))


def _same_side(embedder: Embedder) -> bool:
    """Whether queries and documents embed alike (one method, or no prefixes on either)."""
    if type(embedder).embed_queries is type(embedder).embed_documents:
        return True
    return (getattr(embedder, "query_prefix", None) == ""
            and getattr(embedder, "document_prefix", None) == "")
