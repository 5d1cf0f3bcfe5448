"""CCSK labels (T1, the RQM target of T5, label files, resume, provenance, making labels)."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from quaderno.errors import ConfigError, InputFormatError
from quaderno.eval.datasets import QARecord
from quaderno.gate.labelling import make_labels, provenance_for, select
from quaderno.gate.labels import (LabelProvenance, LabelRecord, LabelWriter, judge, label_to_y,
                                  read_labels, read_skr, rouge1_recall, rqm_target)
from quaderno.index.embedders import HashEmbedder
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from method_contract import CHUNKS, ListRetriever

PROV = LabelProvenance(llm="fake:a", retriever="list:3", k=3, prompt_id="p")


# -- T1: the label function ---------------------------------------------------------------
def test_t1_three_outcomes_multi_gold_and_normalisation():
    golds = ["The Beatles", "Beatles"]
    assert judge("unknown", "the beatles!", golds) == "ir_better"  # normalised EM
    assert judge("Beatles", "Rolling Stones", golds) == "ir_worse"  # second gold matches
    assert judge("Beatles", "THE BEATLES.", golds) == "same"  # both right
    assert judge("x", "y", golds) == "same"  # both wrong
    # pluggable metric: cover-EM counts a mention, EM does not
    assert judge("x", "it was the Beatles band", golds) == "same"
    assert judge("x", "it was the Beatles band", golds, metric="cover_em") == "ir_better"
    with pytest.raises(ConfigError, match="unknown label metric 'bleu'"):
        judge("a", "b", golds, metric="bleu")
    assert [label_to_y(j) for j in ("ir_better", "ir_worse", "same")] == [1, 0, 0]


# -- the RQM target (R2) ------------------------------------------------------------------
def test_rqm_target_zero_when_rouge_is_zero_and_bounded():
    emb = HashEmbedder(64)
    resp, golds = "paris is the capital", ["Paris"]
    vecs = emb.embed_documents([resp, *golds])
    assert rouge1_recall(resp, "Paris") == 1.0
    y = rqm_target(resp, golds, vecs[0], vecs[1:])
    assert 0.3 <= y <= 1.0  # R-1 = 1 contributes 0.3, the cosine the rest
    other = emb.embed_documents(["london", "Paris"])
    assert rqm_target("london", ["Paris"], other[0], other[1:]) == 0.0
    # max over golds
    v2 = emb.embed_documents([resp, "Rome", "Paris"])
    assert rqm_target(resp, ["Rome", "Paris"], v2[0], v2[1:]) == pytest.approx(y)
    with pytest.raises(ConfigError, match="weights"):
        rqm_target(resp, golds, vecs[0], vecs[1:], weights=(0.5, 0.6))


# -- label files ----------------------------------------------------------------------------
def record(i: int, judgement: str = "same") -> LabelRecord:
    return LabelRecord(id=f"q{i}", question=f"question {i}", golden_answers=["a"],
                       answer_no_retrieval="a", answer_retrieval="b", judgement=judgement,
                       split="train")


def test_label_file_round_trip_resume_and_torn_tail(tmp_path):
    path = tmp_path / "labels.jsonl"
    w = LabelWriter(path, PROV)
    w.write(record(1))
    w.write(record(2, "ir_worse"))
    with open(path, "a") as fh:
        fh.write('{"id": "q3", "question": "tor')  # a writer killed mid-line
    data = read_labels(path)
    assert data.provenance == PROV and [r.id for r in data.records] == ["q1", "q2"]
    again = LabelWriter(path, PROV)  # resume: knows what is done, cuts the torn line
    assert again.done == {"q1", "q2"}
    again.write(record(3))
    assert [r.id for r in read_labels(path).records] == ["q1", "q2", "q3"]
    other = PROV.model_copy(update={"llm": "fake:b"})
    with pytest.raises(ConfigError, match="fake:a.*not LLM fake:b"):
        LabelWriter(path, other)


def test_precomputed_answers_file_and_bad_lines(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"question": "q", "golden_answers": ["x"],
                                "answer_no_retrieval": "y", "answer_retrieval": "x"}) + "\n")
    data = read_labels(path)
    assert data.provenance is None
    assert data.records[0].labelled() == "ir_better"  # SKR's rule on the two answers
    path.write_text('{"question": "q"}\n{"question": "q2", "golden_answers": []}\n')
    with pytest.raises(InputFormatError, match="line 1.*golden_answers"):
        read_labels(path)


def test_read_skr_and_select_dedupes(tmp_path):
    path = tmp_path / "skr.json"
    path.write_text(json.dumps([{"question": "Who won?", "judgement": "ir_better",
                                 "golden_answers": ["x"]}]))
    skr = read_skr(path)
    assert skr[0].judgement == "ir_better" and skr[0].source == "skr-instructgpt"
    recs = [QARecord(id=str(i), question=q, answers=a) for i, (q, a) in enumerate(
        [("Who won?", ["x"]), ("who won", ["x"]), ("Where?", ["http://x.org"]), ("When?", ["1"]),
         ("Why?", ["2"])])]
    kept = select(recs, n=None, exclude=["WHY?"])
    assert sorted(r.question for r in kept) == ["When?", "Who won?"]  # dup, URL, excluded gone
    assert select(recs, n=None, seed=1) != select(recs, n=None, seed=2) or len(kept) < 3


# -- making labels with an LLM ------------------------------------------------------------
def test_make_labels_with_a_fake_llm_is_resumable(tmp_path):
    def reply(request):
        text = request.messages[-1].content
        return ("<answer>mixed martial artist</answer>" if "Documents" in text
                else "No idea. <answer>boxer</answer>")
    lm = LM(FakeLLM(respond=reply))
    retriever = ListRetriever(CHUNKS)
    emb = HashEmbedder(64)
    prov = provenance_for(lm, retriever, method="vanilla-rag", options={"k": 2}, embedder=emb)
    assert prov.llm == "fake:fake" and prov.k == 2 and prov.retriever == "list:3"
    records = [QARecord(id="a", question="What do they do?", answers=["mixed martial artist"]),
               QARecord(id="b", question="What sport?", answers=["boxer"])]
    path = tmp_path / "l.jsonl"
    out = asyncio.run(make_labels(records[:1], LabelWriter(path, prov), lm, retriever,
                                  split="train", source="t", embedder=emb))
    assert out[0].judgement == "ir_better" and out[0].rqm_target == 0.0
    assert out[0].response_no_retrieval.startswith("No idea")
    out = asyncio.run(make_labels(records, LabelWriter(path, prov), lm, retriever,
                                  split="train", source="t", embedder=emb))
    assert [r.id for r in out] == ["b"]  # "a" was done
    labels = read_labels(path).records
    assert [r.judgement for r in labels] == ["ir_better", "ir_worse"]
    assert labels[1].rqm_target > 0.3 and labels[1].llm_calls_retrieval == 1
    with pytest.raises(ConfigError, match="must retrieve"):
        provenance_for(lm, retriever, method="vanilla-llm")
    assert np.isfinite(labels[1].rqm_target)


def test_relabel_judges_stored_answers_with_another_metric():
    from quaderno.gate.labels import LabelFile, relabel
    r = LabelRecord(question="q", golden_answers=["the Beatles"], answer_no_retrieval="x",
                    answer_retrieval="it was the Beatles band", judgement="same")
    skr = LabelRecord(question="s", golden_answers=["y"], judgement="ir_worse")
    out = relabel(LabelFile(provenance=PROV, records=[r, skr]), "cover_em")
    assert [x.judgement for x in out.records] == ["ir_better", "ir_worse"]
    assert out.provenance.metric == "cover_em" and PROV.metric == "em"
