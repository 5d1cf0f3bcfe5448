"""Split documents into chunks of at most N words, with optional overlap."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from quaderno.corpus.chunk import Chunk
from quaderno.errors import ConfigError


class WordChunker:
    """Chunk a document into windows of at most ``max_words`` words.

    ``overlap`` words are repeated at the start of each following window. A document
    that already fits is kept whole and keeps its id; otherwise chunk ids are
    ``{doc_id}#{i}`` so they stay stable across rebuilds.
    """

    def __init__(self, max_words: int = 300, overlap: int = 0) -> None:
        if max_words < 1:
            raise ConfigError(f"max_words must be at least 1, got {max_words}")
        if overlap < 0 or overlap >= max_words:
            raise ConfigError(
                f"overlap must be in [0, max_words={max_words}), got {overlap}")
        self.max_words = max_words
        self.overlap = overlap

    def split(self, chunk: Chunk) -> list[Chunk]:
        words = chunk.text.split()
        if len(words) <= self.max_words:
            return [chunk]
        step = self.max_words - self.overlap
        pieces: list[Chunk] = []
        for i, start in enumerate(range(0, len(words), step)):
            window = words[start:start + self.max_words]
            pieces.append(chunk.model_copy(update={
                "id": f"{chunk.id}#{i}",
                "text": " ".join(window),
                "meta": {**chunk.meta, "parent_id": chunk.id, "chunk_index": i},
            }))
            if start + self.max_words >= len(words):
                break
        return pieces

    def __call__(self, chunks: Iterable[Chunk]) -> Iterator[Chunk]:
        for chunk in chunks:
            yield from self.split(chunk)
