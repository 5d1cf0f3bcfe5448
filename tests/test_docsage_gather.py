"""Which chunks DocSage reads: the sample, the probe set and the budgeted extraction scope."""

from __future__ import annotations

import asyncio

from quaderno.corpus.chunk import Chunk
from quaderno.index.hits import Hit
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.gather import doc_id, extraction_scope, probe_set, sample_set
from quaderno.methods.docsage.schema import generic_schema
from quaderno.methods.episode import Episode


def ranked(docs: int, per_doc: int) -> list[Hit]:
    hits = [Chunk(id=f"d{d}#{i}", text=f"doc {d} part {i}", meta={"parent_id": f"d{d}"})
            for i in range(per_doc) for d in range(docs)]
    return [Hit(chunk=c, score=1.0, rank=r, retriever="t") for r, c in enumerate(hits, 1)]


def test_doc_id_reads_the_parent_document():
    assert doc_id(ranked(1, 1)[0]) == "d0"
    plain = Hit(chunk=Chunk(id="report#3", text="x"), score=1, rank=1, retriever="t")
    assert doc_id(plain) == "report"


def test_sample_is_the_top_hits_plus_other_documents_seeded():
    hits = ranked(20, 2)  # ranks 1-20 are part 0 of d0..d19, then part 1 of each
    sample = sample_set(hits, top=8, diverse=4, seed=1)
    assert [h.chunk.id for h in sample[:8]] == [f"d{d}#0" for d in range(8)]
    extra = {doc_id(h) for h in sample[8:]}
    assert len(sample) == 12 and len(extra) == 4 and not extra & {f"d{d}" for d in range(8)}
    assert sample_set(hits, seed=1) == sample and sample_set(hits, seed=2) != sample


def test_probe_covers_min_docs_and_has_the_requested_size():
    hits = ranked(3, 10) + ranked(12, 1)[3:]   # many chunks of 3 docs, then 9 more docs
    probe = probe_set(hits, size=24, min_docs=8)
    assert len(probe) == 24 and len({h.chunk.id for h in probe}) == 24
    assert len({doc_id(h) for h in probe}) >= 8


def test_extraction_scope_adds_table_queries_and_reports_the_cut():
    class R:
        def fingerprint(self):
            return "r"

        def retrieve(self, query, k=5):
            return ranked(30, 1)[:k] if "facts" in query else []

        def retrieve_batch(self, qs, k=5):
            return [self.retrieve(q, k) for q in qs]
    ep = Episode("q", method="docsage", lm=LM(FakeLLM()), retriever=R())
    scope, cut = asyncio.run(extraction_scope(ep, generic_schema(), ranked(2, 1),
                                              max_chunks=10, per_query=20))
    assert len(scope) == 10 and cut
    assert [h.chunk.id for h in scope[:2]] == ["d0#0", "d1#0"]  # the question's hits first
    scope, cut = asyncio.run(extraction_scope(ep, generic_schema(), [], max_chunks=50,
                                              per_query=20))
    assert len(scope) == 20 and not cut
    assert ep.evidence == []  # gathering cites nothing
