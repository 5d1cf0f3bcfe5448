"""Which chunks DocSage reads: ASK's sample and probe sets, and the extraction scope.

The paper extracts "for each document chunk"; a collection may be larger than a question's
budget, so (spec A1, A12) chunks are gathered by retrieval: the question's top hits, then
hits for each entity type and table of the schema, until ``max_chunks``. The sample for
F_init is the question's top ``sample_k`` plus a few chunks from other documents
(diversity); the probe set for trial extraction covers at least ``probe_docs`` documents.
Which chunks were read, and whether the budget cut the scope, is recorded by the method.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from quaderno.index.hits import Hit
from quaderno.methods.docsage.chunk_extract import doc_id_of
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.episode import Episode


def doc_id(hit: Hit) -> str:
    """The document a retrieved chunk came from."""
    return doc_id_of(hit.chunk)


def dedup(hits: Iterable[Hit]) -> list[Hit]:
    seen, out = set(), []
    for h in hits:
        if h.chunk.id not in seen:
            seen.add(h.chunk.id)
            out.append(h)
    return out


def sample_set(ranked: Sequence[Hit], *, top: int = 8, diverse: int = 4,
               seed: int = 0) -> list[Hit]:
    """D_sample (Eq. 1): the top ``top`` hits plus ``diverse`` chunks drawn (seeded) from
    documents the top hits do not cover."""
    head = list(ranked[:top])
    docs = {doc_id(h) for h in head}
    rest = [h for h in ranked[top:] if doc_id(h) not in docs]
    by_doc: dict[str, Hit] = {}
    for h in rest:
        by_doc.setdefault(doc_id(h), h)
    pool = list(by_doc.values())
    random.Random(seed).shuffle(pool)
    return head + pool[:diverse]


def probe_set(ranked: Sequence[Hit], *, size: int = 24, min_docs: int = 8) -> list[Hit]:
    """The probe set of trial extraction (spec A1): ``size`` chunks stratified by rank, at
    least one chunk from each of the first ``min_docs`` documents."""
    firsts: dict[str, Hit] = {}
    for h in ranked:
        firsts.setdefault(doc_id(h), h)
    chosen = list(firsts.values())[:min_docs]
    ids = {h.chunk.id for h in chosen}
    stride = max(1, len(ranked) // max(1, size))
    for h in list(ranked[::stride]) + list(ranked):
        if len(chosen) >= size:
            break
        if h.chunk.id not in ids:
            ids.add(h.chunk.id)
            chosen.append(h)
    return chosen


def table_query(table: Table) -> str:
    """A search query for the documents that fill ``table``."""
    words = [table.name.replace("_", " "), table.description]
    words += [c.name.replace("_", " ") for c in table.columns[:6]]
    return " ".join(w for w in words if w)


async def extraction_scope(ep: Episode, schema: Schema, ranked: Sequence[Hit], *,
                           max_chunks: int, per_query: int) -> tuple[list[Hit], bool]:
    """The chunks to extract from: the question's hits, then each table's and entity type's,
    deduplicated, at most ``max_chunks``; and whether more were found than the budget."""
    queries = [table_query(t) for t in schema.tables] + list(schema.requirements.entity_types)
    found = list(ranked)
    for q in queries:
        found += await ep.retrieve(q, per_query, cite=False)
    unique = dedup(found)
    return unique[:max_chunks], len(unique) > max_chunks
