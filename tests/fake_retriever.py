"""A retriever for method tests: it records every query and answers with the documents a test
describes, ``docs(query, n, k) -> [(id, text, title), ...]`` (``n``: this call's number)."""

from __future__ import annotations

from collections.abc import Callable

from quaderno.corpus.chunk import Chunk
from quaderno.index.hits import Hit

DocsFn = Callable[[str, int, int], list[tuple[str, str, str]]]


class FakeRetriever:
    def __init__(self, docs: DocsFn, name: str = "docs") -> None:
        self.docs, self.name = docs, name
        self.queries: list[str] = []

    def fingerprint(self) -> str:
        return self.name

    def retrieve(self, query: str, k: int = 5) -> list[Hit]:
        self.queries.append(query)
        return [Hit(chunk=Chunk(id=i, text=text, title=title), score=1.0, rank=r,
                    retriever=self.name)
                for r, (i, text, title) in enumerate(self.docs(query, len(self.queries), k)[:k],
                                                     start=1)]

    def retrieve_batch(self, queries: list[str], k: int = 5) -> list[list[Hit]]:
        return [self.retrieve(q, k) for q in queries]


def ranked(chunks: list[Chunk], name: str = "list") -> list[Hit]:
    """``chunks`` as hits in their order, scored 1/rank."""
    return [Hit(chunk=c, score=1.0 / r, rank=r, retriever=name)
            for r, c in enumerate(chunks, start=1)]


class ChunkListRetriever:
    """Every query finds the same chunks, in order (the first k); queries are recorded."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = list(chunks)
        self.queries: list[str] = []

    def fingerprint(self) -> str:
        return "list"

    def retrieve(self, query: str, k: int = 5) -> list[Hit]:
        self.queries.append(query)
        return ranked(self.chunks[:k])

    def retrieve_batch(self, queries: list[str], k: int = 5) -> list[list[Hit]]:
        return [self.retrieve(q, k) for q in queries]
