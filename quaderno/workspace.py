"""A workspace: the folder where named knowledge bases and their indexes live.

    $QUADERNO_HOME (default ~/.quaderno)
      kbs/<name>/CURRENT, v-*/{manifest.json, chunks.sqlite}
      indexes/<kb>/<index>/CURRENT, v-*/{manifest.json, bm25/, dense/}

Every write goes through :class:`~quaderno.storage.VersionedDir`: a failed or killed
``add_kb``/``build_index`` leaves what was stored before untouched.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from quaderno.corpus.chunk import Chunk, KBKind
from quaderno.corpus.chunking import WordChunker
from quaderno.corpus.kb import KnowledgeBase, write_kb
from quaderno.errors import AlreadyExistsError, ConfigError, NotFoundError
from quaderno.index.embedders import Embedder, make_embedder
from quaderno.index.kb_index import DenseConfig, KBIndex, build_index
from quaderno.index.retrievers import (BM25Retriever, CachedRetriever, DenseRetriever,
                                       HybridRetriever, MultiKBRetriever, Retriever)
from quaderno.storage import VersionedDir, check_name

log = logging.getLogger(__name__)

MODES = ("auto", "bm25", "dense", "hybrid")


def default_home() -> Path:
    return Path(os.environ.get("QUADERNO_HOME") or Path.home() / ".quaderno")


class Workspace:
    """Named knowledge bases and their indexes under one root folder."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_home()
        self._embedders: dict[str, Embedder] = {}

    # -- knowledge bases ----------------------------------------------------------------
    def _kb_dir(self, name: str) -> VersionedDir:
        return VersionedDir(self.root / "kbs" / check_name(name, "knowledge base name"))

    def has_kb(self, name: str) -> bool:
        return self._kb_dir(name).current() is not None

    def add_kb(self, name: str, chunks: Iterable[Chunk], *, kind: KBKind | str = KBKind.passage,
               replace: bool = False, max_words: int | None = 300, overlap: int = 0,
               dedup: bool = True, description: str = "", sources: Sequence[str] = (),
               progress: Callable[[int], None] | None = None) -> KnowledgeBase:
        """Store ``chunks`` as knowledge base ``name``.

        Documents longer than ``max_words`` are split (``None``: keep whole; QA pairs are
        never split). Refuses to
        overwrite an existing KB unless ``replace``; the old one stays intact until the
        new one is complete.
        """
        vdir = self._kb_dir(name)
        if vdir.current() is not None and not replace:
            raise AlreadyExistsError(
                f"knowledge base {name!r} already exists; pass replace=True (--replace) to "
                "rebuild it")
        try:
            kind = KBKind(kind)
        except ValueError:
            raise ConfigError(
                f"unknown KB kind {kind!r}; use one of {', '.join(k.value for k in KBKind)}"
            ) from None
        # A QA pair is the unit of a historical-QA knowledge base: never split it.
        chunker = WordChunker(max_words, overlap) if max_words and kind is not KBKind.qa_pair \
            else None
        with vdir.build() as folder:
            write_kb(folder, name, chunks, kind=kind, chunker=chunker, dedup=dedup,
                     description=description, sources=sources, progress=progress)
        return self.kb(name)

    def kb(self, name: str) -> KnowledgeBase:
        folder = self._kb_dir(name).current()
        if folder is None:
            known = ", ".join(self.kb_names()) or "none"
            raise NotFoundError(f"no knowledge base named {name!r} (known: {known})")
        return KnowledgeBase(folder)

    def kb_names(self) -> list[str]:
        base = self.root / "kbs"
        if not base.is_dir():
            return []
        return sorted(p.name for p in base.iterdir() if VersionedDir(p).current() is not None)

    def list_kbs(self) -> list[dict[str, Any]]:
        out = []
        for name in self.kb_names():
            kb = self.kb(name)
            out.append({**kb.manifest, "indexes": self.index_names(name)})
        return out

    def remove_kb(self, name: str) -> None:
        self.kb(name)  # raises NotFoundError naming the known KBs
        self._kb_dir(name).remove()
        shutil.rmtree(self.root / "indexes" / name, ignore_errors=True)

    def merge_kbs(self, name: str, sources: Sequence[str], *, replace: bool = False,
                  dedup: bool = True) -> KnowledgeBase:
        """A new KB holding every chunk of ``sources``; ids become ``{source}/{id}``."""
        if len(sources) < 2:
            raise ConfigError(f"merging needs at least two knowledge bases, got {list(sources)}")
        kbs = [self.kb(s) for s in sources]
        kinds = {kb.kind for kb in kbs}
        kind = kinds.pop() if len(kinds) == 1 else KBKind.mixed

        def chunks() -> Iterator[Chunk]:
            for kb in kbs:
                for chunk in kb:
                    yield chunk.model_copy(update={
                        "id": f"{kb.name}/{chunk.id}",
                        "meta": {**chunk.meta, "origin_kb": kb.name, "origin_kind": kb.kind.value},
                    })

        return self.add_kb(name, chunks(), kind=kind, replace=replace, max_words=None,
                           dedup=dedup, description=f"merge of {', '.join(sources)}",
                           sources=[f"kb:{s}" for s in sources])

    # -- indexes ------------------------------------------------------------------------
    def _index_root(self, kb: str, index: str) -> Path:
        return self.root / "indexes" / check_name(kb, "knowledge base name") / check_name(
            index, "index name")

    def index_names(self, kb: str) -> list[str]:
        base = self.root / "indexes" / kb
        if not base.is_dir():
            return []
        return sorted(p.name for p in base.iterdir() if VersionedDir(p).current() is not None)

    def embedder(self, spec: str) -> Embedder:
        """The embedder for ``spec``, loaded once per workspace."""
        if spec not in self._embedders:
            self._embedders[spec] = make_embedder(spec)
        return self._embedders[spec]

    def build_index(self, kb: str, *, index: str = "default", bm25: bool = True,
                    embedder: Embedder | str | None = None, dense: DenseConfig | None = None,
                    bm25_params: dict[str, Any] | None = None,
                    progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
        if isinstance(embedder, str):
            embedder = self.embedder(embedder)
        return build_index(self.kb(kb), self._index_root(kb, index), bm25=bm25,
                           embedder=embedder, dense=dense, bm25_params=bm25_params,
                           progress=progress)

    def open_index(self, kb: str, *, index: str = "default",
                   embedder: Embedder | None = None) -> KBIndex:
        """Open an index; its embedder is loaded on first dense query, once per workspace."""
        return KBIndex(self.kb(kb), self._index_root(kb, index), embedder=embedder,
                       embedder_factory=self.embedder)

    def retriever(self, kbs: str | Sequence[str], *, mode: str = "auto", index: str = "default",
                  embedder: Embedder | None = None, strategy: str = "split",
                  cache: bool = True) -> Retriever:
        """A retriever over one or several KBs.

        ``mode``: ``bm25``, ``dense``, ``hybrid`` (RRF of both) or ``auto`` (hybrid when
        the index has both components, else the one it has).
        """
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        names = [kbs] if isinstance(kbs, str) else list(kbs)
        if not names:
            raise ConfigError("no knowledge base given")
        per_kb: list[Retriever] = []
        for name in names:
            opened = self.open_index(name, index=index, embedder=embedder)
            per_kb.append(self._one(opened, mode))
        retriever: Retriever = per_kb[0] if len(per_kb) == 1 else MultiKBRetriever(
            per_kb, strategy=strategy)
        return CachedRetriever(retriever) if cache else retriever

    @staticmethod
    def _one(opened: KBIndex, mode: str) -> Retriever:
        comps = set(opened.components)
        if mode == "auto":
            mode = "hybrid" if comps >= {"bm25", "dense"} else ("bm25" if "bm25" in comps
                                                               else "dense")
        if mode == "bm25":
            return BM25Retriever(opened)
        if mode == "dense":
            return DenseRetriever(opened)
        return HybridRetriever([BM25Retriever(opened), DenseRetriever(opened)])
