"""BM25 checked against rank-bm25 (the reference implementation) on a real corpus."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from quaderno.errors import ConfigError
from quaderno.index.bm25 import BM25Index

QUERIES = [
    "who got the first nobel prize in physics",
    "lobbyist for Genentech in Washington",
    "world war battle army",
    "album released by the band in 1999",
    "river that flows through the capital city",
]


@pytest.fixture(scope="module")
def corpus(wiki_chunks):
    return [c.render() for c in wiki_chunks]


def _strings(index: BM25Index, texts):
    return index.tokenizer.tokenize(list(texts), return_as="string", update_vocab=False,
                                    show_progress=False)


def test_robertson_matches_rank_bm25_okapi(corpus):
    index = BM25Index(method="robertson", k1=1.5, b=0.75)
    index.build(corpus)
    reference = BM25Okapi(_strings(index, corpus), k1=1.5, b=0.75)
    for query in QUERIES:
        expected = reference.get_scores(_strings(index, [query])[0])
        # bm25s leaves out the constant (k1 + 1) factor of the Okapi numerator
        ours = index.get_scores(query) * (1.5 + 1)
        np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-4)
        top = np.argsort(-expected, kind="stable")[:10]
        _, positions = index.search([query], 10)
        assert set(positions[0]) == set(top)


def test_lucene_matches_formula(corpus):
    """Lucene BM25: idf = ln(1 + (N - n + .5)/(n + .5)),
    tf part tf/(tf + k1(1 - b + b dl/avgdl))."""
    k1, b = 1.2, 0.75
    index = BM25Index(method="lucene", k1=k1, b=b)
    index.build(corpus)
    docs = _strings(index, corpus)
    n_docs = len(docs)
    avgdl = sum(map(len, docs)) / n_docs
    df: dict[str, int] = {}
    for doc in docs:
        for tok in set(doc):
            df[tok] = df.get(tok, 0) + 1
    for query in QUERIES[:3]:
        q = _strings(index, [query])[0]
        expected = np.zeros(n_docs)
        for j, doc in enumerate(docs):
            for tok in q:
                tf = doc.count(tok)
                if tf:
                    idf = math.log(1 + (n_docs - df[tok] + 0.5) / (df[tok] + 0.5))
                    expected[j] += idf * tf / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        np.testing.assert_allclose(index.get_scores(query), expected, rtol=1e-4, atol=1e-5)


def test_search_pads_and_ignores_unknown_words(corpus):
    index = BM25Index()
    index.build(corpus[:50])
    scores, positions = index.search(["zzqqxx unknownword", "Evan Morris lobbyist"], 5)
    assert (positions[0] == -1).all() and (scores[0] == 0).all()
    assert positions[1][0] == 0 and scores[1][0] > 0
    scores, positions = index.search(["Evan Morris"], 80)  # k above corpus size
    assert positions.shape == (1, 80) and positions[0][0] == 0


def test_save_load_round_trip(corpus, tmp_path):
    index = BM25Index()
    index.build(corpus)
    params = index.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25", params)
    for query in QUERIES:
        a, pa = index.search([query], 10)
        b, pb = loaded.search([query], 10)
        assert (pa == pb).all()
        np.testing.assert_allclose(a, b)


@pytest.mark.parametrize("kwargs, word", [({"method": "okapi"}, "method"), ({"k1": -1}, "k1"),
                                          ({"b": 2}, "b")])
def test_bad_parameters(kwargs, word):
    with pytest.raises(ConfigError, match=word):
        BM25Index(**kwargs)
