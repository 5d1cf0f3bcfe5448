"""Hybrid fusion, multi-KB search, caching: behaviour over the real sample corpus."""

from __future__ import annotations

import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.errors import ConfigError
from quaderno.index.hits import Hit, reciprocal_rank_fusion
from quaderno.index.retrievers import (BM25Retriever, CachedRetriever, DenseRetriever,
                                       HybridRetriever, MultiKBRetriever)


def hit(cid: str, rank: int, kb: str = "k") -> Hit:
    return Hit(chunk=Chunk(id=cid, text=f"text {cid}", kb=kb), score=0.0, rank=rank, retriever="x")


def test_rrf_hand_computed():
    a = [hit("d1", 1), hit("d2", 2), hit("d3", 3)]
    b = [hit("d3", 1), hit("d1", 2), hit("d4", 3)]
    fused = reciprocal_rank_fusion([a, b], 4, rrf_k=60)
    assert [h.chunk.id for h in fused] == ["d1", "d3", "d2", "d4"]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1].score == pytest.approx(1 / 63 + 1 / 61)
    assert [h.rank for h in fused] == [1, 2, 3, 4]
    assert reciprocal_rank_fusion([a, b], 2)[1].chunk.id == "d3"


def test_rrf_tie_broken_by_best_rank():
    fused = reciprocal_rank_fusion([[hit("x", 2)], [hit("y", 1), hit("z", 3)]], 3, rrf_k=0)
    assert [h.chunk.id for h in fused] == ["y", "x", "z"]


def test_bm25_dense_hybrid_find_the_obvious_passage(wiki_ws):
    query = "Evan Morris lobbyist for Genentech and Roche"
    for mode in ("bm25", "dense", "hybrid"):
        hits = wiki_ws.retriever("wiki", mode=mode).retrieve(query, 5)
        assert len(hits) == 5, mode
        assert hits[0].chunk.title == "Evan Morris", mode
        assert [h.rank for h in hits] == [1, 2, 3, 4, 5]


def test_hybrid_is_the_fusion_of_its_parts(wiki_ws):
    opened = wiki_ws.open_index("wiki")
    bm25, dense = BM25Retriever(opened), DenseRetriever(opened)
    hybrid = HybridRetriever([bm25, dense], depth=20)
    query = "first nobel prize in physics"
    expected = reciprocal_rank_fusion([bm25.retrieve(query, 20), dense.retrieve(query, 20)], 5)
    assert [h.chunk.id for h in hybrid.retrieve(query, 5)] == [h.chunk.id for h in expected]


def test_batch_equals_single(wiki_ws):
    r = wiki_ws.retriever("wiki", mode="hybrid", cache=False)
    queries = ["nobel prize physics", "Genentech lobbyist", "battle of the river"]
    batch = r.retrieve_batch(queries, 4)
    assert [[h.chunk.id for h in hs] for hs in batch] == \
        [[h.chunk.id for h in r.retrieve(q, 4)] for q in queries]


def test_multi_kb_split_takes_half_from_each(wiki_ws, data_dir):
    from quaderno.corpus.loaders import load_qa_pairs
    wiki_ws.add_kb("med", load_qa_pairs(data_dir / "medquad_20.jsonl"), kind="qa_pair")
    wiki_ws.build_index("med", embedder="hash:256")
    r = wiki_ws.retriever(["wiki", "med"], mode="bm25")
    assert isinstance(r.retriever, MultiKBRetriever)
    hits = r.retrieve("leukemia treatment for adults", 6)
    assert [h.chunk.kb for h in hits] == ["wiki", "med"] * 3
    assert [h.rank for h in hits] == list(range(1, 7))
    fused = wiki_ws.retriever(["wiki", "med"], mode="bm25", strategy="fuse").retrieve(
        "leukemia treatment for adults", 6)
    assert len(fused) == 6 and {h.chunk.kb for h in fused} <= {"wiki", "med"}


def test_multi_kb_drops_identical_text(ws):
    for name in ("a", "b"):
        ws.add_kb(name, [Chunk(id="1", text="the shared passage about otters"),
                         Chunk(id="2", text=f"unique passage {name} otters")])
        ws.build_index(name, embedder=None)
    hits = ws.retriever(["a", "b"], mode="bm25").retrieve("shared otters", 4)
    texts = [h.chunk.text for h in hits]
    assert len(texts) == len(set(texts)) == 3


def test_cache_hits_and_is_keyed_on_the_index_build(ws):
    ws.add_kb("k", [Chunk(id="1", text="apples are red"), Chunk(id="2", text="pears are green")])
    ws.build_index("k", embedder=None)
    r = ws.retriever("k", mode="bm25")
    assert isinstance(r, CachedRetriever)
    first = r.retrieve("green pears", 1)
    assert r.retrieve("green pears", 1) == first and (r.hits, r.misses) == (1, 1)
    r.retrieve("green pears", 2)
    assert r.misses == 2  # k is part of the key
    old_key = r._key("green pears", 1)
    ws.add_kb("k", [Chunk(id="3", text="green pears and green grapes")], replace=True)
    ws.build_index("k", embedder=None)
    r2 = ws.retriever("k", mode="bm25")
    assert r2._key("green pears", 1) != old_key
    assert r2.retrieve("green pears", 1)[0].chunk.id == "3"


def test_parameter_errors(wiki_ws):
    r = wiki_ws.retriever("wiki", mode="bm25")
    with pytest.raises(ConfigError, match="k must be a positive integer, got 0"):
        r.retrieve("x", 0)
    with pytest.raises(ConfigError, match="mode must be one of"):
        wiki_ws.retriever("wiki", mode="sparse")
    with pytest.raises(ConfigError, match="strategy"):
        MultiKBRetriever([r], strategy="zip")
    with pytest.raises(ConfigError, match="at least 2"):
        HybridRetriever([r])
