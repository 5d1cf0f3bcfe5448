"""The Qdrant adapter against Qdrant's local mode (same client code as a server/cluster)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("qdrant_client")

from quaderno.index.kb_index import DenseConfig  # noqa: E402
from quaderno.index.vectorstore import FaissVectorStore, QdrantVectorStore  # noqa: E402
from quaderno.workspace import Workspace  # noqa: E402


def test_qdrant_local_matches_faiss_flat(tmp_path):
    rng = np.random.default_rng(1)
    docs = rng.normal(size=(300, 16)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = docs[:5] + 0.01
    q = QdrantVectorStore(16, collection="t", path=tmp_path / "q")
    q.add(docs[:100])
    q.add(docs[100:])
    f = FaissVectorStore(16)
    f.add(docs)
    qs, qi = q.search(queries, 5)
    fs, fi = f.search(queries, 5)
    assert (qi == fi).all()
    np.testing.assert_allclose(qs, fs, rtol=1e-4)
    assert len(q) == 300


def test_qdrant_index_round_trip(wiki_ws):
    wiki_ws.build_index("wiki", index="qd", bm25=False, embedder="hash:256",
                        dense=DenseConfig(store="qdrant", batch_size=500))
    query = "first nobel prize in physics"
    faiss_ids = [h.chunk.id for h in wiki_ws.retriever("wiki", mode="dense").retrieve(query, 5)]
    reopened = Workspace(wiki_ws.root)
    hits = reopened.retriever("wiki", mode="dense", index="qd").retrieve(query, 5)
    assert [h.chunk.id for h in hits] == faiss_ids
    assert reopened.open_index("wiki", index="qd").manifest["components"]["dense"]["path"] \
        == "local:qdrant"


def test_concurrent_first_searches_open_the_store_once(tmp_path):
    """Episodes search in worker threads: the first searches of a fresh retriever race to
    load the index; Qdrant's local mode refuses a second client on the same folder."""
    import threading

    from quaderno.corpus.chunk import Chunk
    from quaderno.index.kb_index import DenseConfig
    from quaderno.workspace import Workspace
    ws = Workspace(tmp_path / "home")
    ws.add_kb("k", [Chunk(id=str(i), text=f"alpha beta {i} gamma") for i in range(50)])
    ws.build_index("k", embedder="hash:64", dense=DenseConfig(store="qdrant"))
    retriever = ws.retriever("k", mode="dense", cache=False)
    results, errors = [], []

    def search():
        try:
            results.append([h.chunk.id for h in retriever.retrieve("alpha 3", 3)])
        except Exception as exc:  # noqa: BLE001 - the test reports whatever was raised
            errors.append(repr(exc))

    threads = [threading.Thread(target=search) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(results) == 6 and all(r == results[0] for r in results)
