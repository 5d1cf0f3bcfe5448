"""A knowledge base: a named, persistent collection of chunks of one kind.

Chunks live in a SQLite file whose row position is the chunk's position in every index
built over the KB (so an index returns positions and the KB returns chunks). The KB is
written through :class:`~quaderno.storage.VersionedDir`, so replacing a KB is atomic.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from quaderno import __version__
from quaderno.corpus.chunk import Chunk, KBKind
from quaderno.corpus.chunking import WordChunker
from quaderno.errors import InputFormatError, NotFoundError
from quaderno.storage import read_manifest, write_json_atomic

log = logging.getLogger(__name__)

KB_FORMAT_VERSION = 1
_SCHEMA = """
CREATE TABLE chunks (
    pos INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    title TEXT NOT NULL,
    source TEXT NOT NULL,
    meta TEXT NOT NULL,
    md5 TEXT NOT NULL
);
CREATE INDEX chunks_md5 ON chunks(md5);
"""


class KnowledgeBase:
    """Read access to one stored knowledge base version (opened from its folder)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.manifest = read_manifest(self.path / "manifest.json", kind="knowledge_base",
                                      format_version=KB_FORMAT_VERSION)
        self._db_path = self.path / "chunks.sqlite"
        self._conn: sqlite3.Connection | None = None

    # -- metadata -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.manifest["name"]

    @property
    def kind(self) -> KBKind:
        return KBKind(self.manifest["kb_kind"])

    @property
    def fingerprint(self) -> str:
        """Hash of every chunk id and text, in order: identifies the content indexes were
        built on."""
        return self.manifest["fingerprint"]

    def __len__(self) -> int:
        return int(self.manifest["num_chunks"])

    def __repr__(self) -> str:
        return f"KnowledgeBase(name={self.name!r}, kind={self.kind.value}, chunks={len(self)})"

    # -- reads ----------------------------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            uri = f"file:{self._db_path}?mode=ro"
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        return self._conn

    def _row(self, row: Sequence[Any]) -> Chunk:
        return Chunk(id=row[0], text=row[1], title=row[2], source=row[3], kb=self.name,
                     meta=json.loads(row[4]))

    def by_positions(self, positions: Sequence[int]) -> list[Chunk]:
        """Chunks at index positions, in the order asked."""
        if not positions:
            return []
        marks = ",".join("?" * len(positions))
        rows = self.conn.execute(
            f"SELECT pos, id, text, title, source, meta FROM chunks WHERE pos IN ({marks})",
            [int(p) for p in positions]).fetchall()
        found = {r[0]: self._row(r[1:]) for r in rows}
        missing = [p for p in positions if int(p) not in found]
        if missing:
            raise NotFoundError(
                f"knowledge base {self.name!r} has no chunk at positions {missing[:5]}")
        return [found[int(p)] for p in positions]

    def get(self, chunk_id: str) -> Chunk:
        row = self.conn.execute(
            "SELECT id, text, title, source, meta FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"knowledge base {self.name!r} has no chunk {chunk_id!r}")
        return self._row(row)

    def iter_batches(self, batch_size: int = 1024) -> Iterator[list[Chunk]]:
        """All chunks in position order, ``batch_size`` at a time (bounded memory)."""
        cur = self.conn.execute("SELECT id, text, title, source, meta FROM chunks ORDER BY pos")
        while rows := cur.fetchmany(batch_size):
            yield [self._row(r) for r in rows]

    def __iter__(self) -> Iterator[Chunk]:
        for batch in self.iter_batches():
            yield from batch

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def write_kb(folder: Path, name: str, chunks: Iterable[Chunk], *, kind: KBKind,
             chunker: WordChunker | None = None, dedup: bool = True,
             description: str = "", sources: Sequence[str] = (),
             progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Stream ``chunks`` into a new KB folder and write its manifest. Returns the manifest.

    Chunks are split by ``chunker``; with ``dedup`` a chunk whose normalized text MD5
    was already stored is dropped (counted in the manifest). A chunk id seen twice with
    different text is an error naming the id and both sources.
    """
    stream: Iterable[Chunk] = chunker(chunks) if chunker is not None else chunks
    conn = sqlite3.connect(folder / "chunks.sqlite")
    conn.executescript(_SCHEMA)
    digest = hashlib.sha256()
    pos = 0
    duplicates = 0
    seen_md5: set[str] = set()
    batch: list[tuple[Any, ...]] = []

    def flush() -> None:
        try:
            conn.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?)", batch)
        except sqlite3.IntegrityError:
            for row in batch:
                other = conn.execute("SELECT source, pos FROM chunks WHERE id = ?",
                                     (row[1],)).fetchone()
                if other is not None and other[1] != row[0]:
                    raise InputFormatError(
                        f"duplicate chunk id {row[1]!r} with different text "
                        f"(first at {other[0]}, again at {row[4]})") from None
            raise
        batch.clear()

    try:
        for chunk in stream:
            md5 = chunk.md5
            if dedup:
                if md5 in seen_md5:
                    duplicates += 1
                    continue
                seen_md5.add(md5)
            batch.append((pos, chunk.id, chunk.text, chunk.title, chunk.source,
                          json.dumps(chunk.meta, ensure_ascii=False), md5))
            digest.update(chunk.id.encode("utf-8") + b"\0" + md5.encode() + b"\n")
            pos += 1
            if len(batch) >= 2048:
                flush()
                if progress is not None:
                    progress(pos)
        if batch:
            flush()
        conn.commit()
    finally:
        conn.close()
    if pos == 0:
        raise InputFormatError(f"knowledge base {name!r} would be empty: no documents were read")
    if progress is not None:
        progress(pos)
    manifest = {
        "kind": "knowledge_base",
        "format_version": KB_FORMAT_VERSION,
        "quaderno_version": __version__,
        "name": name,
        "kb_kind": kind.value,
        "description": description,
        "sources": list(sources),
        "num_chunks": pos,
        "duplicates_dropped": duplicates,
        "chunking": ({"max_words": chunker.max_words, "overlap": chunker.overlap}
                     if chunker is not None else None),
        "dedup": dedup,
        "fingerprint": digest.hexdigest(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    write_json_atomic(folder / "manifest.json", manifest)
    log.info("knowledge base %s: %d chunks (%d duplicates dropped)", name, pos, duplicates)
    return manifest
