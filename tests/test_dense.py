"""Dense search checked against brute force in numpy."""

from __future__ import annotations

import numpy as np
import pytest

from quaderno.errors import ConfigError, QuadernoError
from quaderno.index.embedders import HashEmbedder, make_embedder
from quaderno.index.vectorstore import FaissVectorStore


@pytest.fixture(scope="module")
def vectors():
    rng = np.random.default_rng(0)
    docs = rng.normal(size=(2000, 48)).astype(np.float32)
    queries = rng.normal(size=(25, 48)).astype(np.float32)
    return docs, queries


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_flat_equals_brute_force(vectors, metric):
    docs, queries = vectors
    store = FaissVectorStore(48, kind="flat", metric=metric)
    store.add(docs[:1000])
    store.add(docs[1000:])  # added in two batches, positions continue
    scores, ids = store.search(queries, 10)
    if metric == "ip":
        full = queries @ docs.T
    else:
        full = -((queries[:, None, :] - docs[None, :, :]) ** 2).sum(-1)
    expected = np.argsort(-full, axis=1, kind="stable")[:, :10]
    assert (ids == expected).all()
    np.testing.assert_allclose(scores, np.take_along_axis(full, expected, 1), rtol=1e-4, atol=1e-3)


def test_hnsw_recall_against_flat(vectors):
    docs, queries = vectors
    flat, hnsw = FaissVectorStore(48), FaissVectorStore(48, kind="hnsw", ef_search=128)
    flat.add(docs)
    hnsw.add(docs)
    _, exact = flat.search(queries, 10)
    _, approx = hnsw.search(queries, 10)
    recall = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(approx, exact)])
    assert recall >= 0.9


def test_save_and_load(vectors, tmp_path):
    docs, queries = vectors
    store = FaissVectorStore(48, kind="hnsw", metric="l2")
    store.add(docs)
    params = store.save(tmp_path)
    loaded = FaissVectorStore.load(tmp_path, params)
    assert len(loaded) == 2000 and loaded.metric == "l2" and loaded.index.hnsw.efSearch == 64
    assert (loaded.search(queries, 5)[1] == store.search(queries, 5)[1]).all()


def test_shape_errors_name_the_shape():
    store = FaissVectorStore(8)
    with pytest.raises(ConfigError, match=r"shape \(n, 8\)"):
        store.add(np.zeros((2, 9), np.float32))
    with pytest.raises(ConfigError, match="metric"):
        FaissVectorStore(8, metric="cos")
    with pytest.raises(ConfigError, match="kind"):
        FaissVectorStore(8, kind="ivf")


def test_hash_embedder_is_normalized_and_lexical():
    emb = HashEmbedder(256)
    v = emb.embed_documents(["the capital of France is Paris", "bananas are yellow", ""])
    assert v.shape == (3, 256) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v[:2], axis=1), 1.0, rtol=1e-5)
    assert np.linalg.norm(v[2]) == 0
    q = emb.embed_queries(["capital of France"])[0]
    assert q @ v[0] > q @ v[1]
    assert (emb.embed_documents(["same"]) == emb.embed_documents(["same"])).all()


@pytest.mark.parametrize("spec", ["nope", "hash:x", "openai:model-without-url", "st:"])
def test_bad_embedder_specs(spec):
    with pytest.raises(ConfigError, match="spec"):
        make_embedder(spec)


def test_openai_embeddings_endpoint_builds_a_searchable_index(ws):
    from quaderno.corpus.chunk import Chunk
    from quaderno.index.embedders import OpenAIEmbedder
    from quaderno.llm.testing import FakeOpenAIServer

    with FakeOpenAIServer(embedding_dim=8) as server:
        emb = OpenAIEmbedder("fake-model", server.url, batch_size=2)
        assert emb.dim == 8 and emb.spec == f"openai:fake-model@{server.url}"
        vecs = emb.embed_documents(["a", "b", "c"])
        assert vecs.shape == (3, 8)
        np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
        assert [len(r["body"]["input"]) for r in server.requests[1:]] == [2, 1]  # batched
        ws.add_kb("k", [Chunk(id=str(i), text=t) for i, t in enumerate(["x y", "z w", "q r"])])
        ws.build_index("k", bm25=False, embedder=emb)
        hits = ws.retriever("k", mode="dense", embedder=emb).retrieve("z w", 1)
        assert hits[0].chunk.id == "1"  # identical text → identical vector
        bad = OpenAIEmbedder("nope", server.url, dim=8)
        with pytest.raises(QuadernoError, match="answered 404"):
            bad.embed_documents(["a"])
