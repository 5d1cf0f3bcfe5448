"""Review of the CCSK gate (issue 12): leakage (SN memory vs evaluation questions, leave-one-out
at inference), unknown label provenance, another LLM's labels in the memory, RQM targets,
decide-first and its LLM-call accounting, F_SN with fewer than K neighbours."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import numpy as np
import pytest

from method_contract import CHUNKS, ListRetriever
from quaderno.errors import ConfigError
from quaderno.gate.decision import GateDecision
from quaderno.gate.gates import ConstantGate, KNNRuleGate
from quaderno.gate.labels import LabelFile, LabelRecord, target_for
from quaderno.gate.protocol import UNKNOWN_LLM
from quaderno.gate.scoring import llm_calls
from quaderno.gate.sn import SimilarQueries
from quaderno.gate.store import GateBundle
from quaderno.gate.train import rqm_targets, train_bundle, tune_single
from quaderno.gate.wrapper import GatedMethod, check_llm
from quaderno.index.embedders import HashEmbedder
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest
from quaderno.methods.baselines import VanillaRAG
from test_gate_data import label_file
from test_gate_sn import ANGLES, MEMORY, TableEmbedder

FAST = dict(min_child_samples=3, rqm_rounds=60, epochs=4)


# -- 1. leakage ----------------------------------------------------------------------------
def test_a_memory_question_never_votes_for_itself_at_inference():
    sn = SimilarQueries(TableEmbedder(ANGLES), k=3, novelty=False).fit(MEMORY)
    # "M0 ?" normalizes to m0's key: m0 (ir_better, similarity 1.0) must not vote
    emb = TableEmbedder(ANGLES | {"M0 ?": 0.0})
    sn.embedder = emb
    [s] = sn.score(["M0 ?"])
    assert 0 not in s.neighbours and s.neighbours == [1, 2, 3] and s.left_out == (0,)
    assert s.f_sn == pytest.approx(2 / 3)
    gate = KNNRuleGate(sn, rule="skr")
    [d] = gate.decide(["M0 ?"], [""])
    assert any(n.startswith("leave-one-out") and "ir_better" in n for n in d.notes)
    # a question not in the memory: nothing left out, no note
    [s] = sn.score(["q"])
    assert s.left_out == () and s.neighbours[0] == 0
    assert not any(n.startswith("leave-one-out") for n in gate.decide(["q"], [""])[0].notes)


def test_every_learned_gate_leaves_the_question_out_of_its_memory():
    labels = label_file(n_train=30, n_val=12, n_test=12)
    bundle = train_bundle(labels, HashEmbedder(64), seed=0, **FAST)
    member = next(r for r in bundle.memory if r.judgement != "same")  # in both memories
    for name in ("ccsk", "sn", "rqm", "skr-knn", "flashrag-skr"):
        [d] = bundle.gate(name).decide([member.question], [member.response])
        assert member.question not in d.neighbours, name
        assert any(n.startswith("leave-one-out") for n in d.notes), name


def test_train_exclude_keeps_evaluation_questions_out_of_the_memory():
    labels = label_file(n_train=30, n_val=12, n_test=12)
    emb = HashEmbedder(64)
    held = {r.question for r in labels.records if r.split != "train"}
    train_qs = [r.question for r in labels.split("train") if r.question not in held]
    extra = [LabelRecord(question=f"who wrote book {i}", golden_answers=["x"],
                         judgement="ir_worse", source="skr-instructgpt") for i in range(4)]
    # evaluation questions, spelled differently (normalized-text dedup)
    exclude = [train_qs[0].upper() + "?", train_qs[1], "Who wrote the book 2"]
    bundle = train_bundle(labels, emb, extra_memory=extra, extra_llm="instructgpt",
                          exclude_questions=exclude, seed=0, **FAST)
    memory = {r.question for r in bundle.memory}
    assert train_qs[0] not in memory and train_qs[1] not in memory
    assert "who wrote book 2" not in memory and "who wrote book 1" in memory
    assert bundle.manifest.training["excluded"] == {"questions": 3, "train": 2,
                                                    "extra_memory": 1}


# -- 3. provenance -------------------------------------------------------------------------
class QuestionGate:
    """Reads only the question: retrieve iff it mentions 'founded'."""

    name = "question-only"
    needs_response = False
    labels_llm: str | None = "fake:fake"
    notes: tuple[str, ...] = ()

    def decide(self, questions: Sequence[str], responses: Sequence[str]) -> list[GateDecision]:
        return [GateDecision(gate=self.name, retrieve="founded" in q) for q in questions]


class ResponseGate(QuestionGate):
    """Reads the response: retrieve iff it says 'not sure'."""

    name = "response"
    needs_response = True

    def decide(self, questions: Sequence[str], responses: Sequence[str]) -> list[GateDecision]:
        return [GateDecision(gate=self.name, retrieve="not sure" in r) for r in responses]


def test_unknown_label_provenance_is_refused_like_another_llm():
    lm = LM(FakeLLM(respond=lambda r: "x"))
    gate = QuestionGate()
    gate.labels_llm = UNKNOWN_LLM
    with pytest.raises(ConfigError, match="unknown"):
        check_llm(gate, lm)
    assert check_llm(gate, lm, allow_other_llm=True) == ["labels of an unknown LLM"]
    # answers of an unknown LLM (no provenance) against a gate with known labels
    with pytest.raises(ConfigError, match="unknown"):
        check_llm(QuestionGate(), None)
    assert check_llm(ConstantGate(True), None) == []  # no labels, nothing to refuse
    # a bundle trained on labels without provenance: its gates say unknown, and are refused
    labels = label_file(n_train=30, n_val=12, n_test=12)
    bundle = train_bundle(LabelFile(provenance=None, records=labels.records), HashEmbedder(64),
                          seed=0, **FAST)
    assert bundle.gate("sn").labels_llm == UNKNOWN_LLM
    with pytest.raises(ConfigError, match="unknown"):
        GatedMethod(bundle.gate("sn"), VanillaRAG(lm, ListRetriever(CHUNKS), k=2), lm)


def test_another_llms_labels_in_the_memory_are_noted_and_warned(tmp_path, caplog):
    labels = label_file(n_train=30, n_val=12, n_test=12)
    extra = [LabelRecord(question=f"who wrote book {i}", golden_answers=["x"],
                         judgement="ir_worse", source="skr-instructgpt") for i in range(5)]
    bundle = train_bundle(labels, HashEmbedder(64), extra_memory=extra,
                          extra_llm="instructgpt", seed=0, **FAST)
    bundle.save(tmp_path / "g")
    with caplog.at_level(logging.WARNING):
        loaded = GateBundle.load(tmp_path / "g")
    assert "SN memory holds 5 labels made with another LLM" in caplog.text
    for name in ("ccsk", "sn", "skr-knn", "rqm"):
        [d] = loaded.gate(name).decide(["when was the acme company founded"], ["not sure"])
        assert any("5 labels made with another LLM" in n and "instructgpt" in n
                   for n in d.notes), name
    assert loaded.gate("never").decide(["q"], [""])[0].notes == []


# -- 4. RQM targets ------------------------------------------------------------------------
def test_rqm_trains_on_targets_computed_like_the_labels_when_the_file_has_none():
    emb = HashEmbedder(64)
    labels = label_file(n_train=30, n_val=12, n_test=12)
    computed = [r.model_copy(update={"rqm_target": target_for(r.response, r.golden_answers,
                                                              emb)})
                for r in labels.records]
    missing = [r.model_copy(update={"rqm_target": None}) for r in labels.records]
    t = rqm_targets([r for r in missing if r.split == "train"], emb)
    assert t.max() > 0.5  # 'The capital of X is <gold>' scores, not 0.0
    assert t.tolist() == [r.rqm_target for r in computed if r.split == "train"]
    a = train_bundle(LabelFile(provenance=labels.provenance, records=computed), emb, seed=0,
                     **FAST)
    b = train_bundle(LabelFile(provenance=labels.provenance, records=missing), emb, seed=0,
                     **FAST)
    x = np.random.default_rng(0).normal(size=(5, 64 + 3))
    assert np.allclose(a.rqm.f_rqm(x), b.rqm.f_rqm(x))
    with pytest.raises(ConfigError, match="no rqm_target and no golden"):
        rqm_targets([LabelRecord(question="q", golden_answers=[])], emb)


# -- 5. decide first -------------------------------------------------------------------------
def reply(request: ChatRequest) -> str:
    if "Documents" in request.messages[-1].content:
        return "From the documents. <answer>1950</answer>"
    q = request.messages[-1].content
    return "not sure <answer>unknown</answer>" if "acme" in q else "Lima. <answer>lima</answer>"


QUESTIONS = ["when was the acme company founded", "what is the capital city of peru",
             "when was the zeta company founded", "what is the capital city of acme"]


@pytest.mark.parametrize("gate", [ConstantGate(True), ConstantGate(False), QuestionGate(),
                                  ResponseGate()], ids=lambda g: g.name)
def test_live_llm_calls_match_the_offline_accounting(gate):
    lm = LM(FakeLLM(respond=reply))
    gated = GatedMethod(gate, VanillaRAG(lm, ListRetriever(CHUNKS), k=2), lm)
    live, offline = [], []
    for q in QUESTIONS:
        answer = asyncio.run(gated.answer(q))
        live.append(len(answer.trace.calls))
        record = LabelRecord(question=q, golden_answers=["x"], answer_no_retrieval="a",
                             answer_retrieval="b", llm_calls_no_retrieval=1,
                             llm_calls_retrieval=1)
        offline.append(llm_calls(record, answer.gate.retrieve, gate.needs_response))
    assert live == offline
    if not gate.needs_response:  # decide first: retrieving costs no closed-book call
        assert all(n == 1 for n in live)


def test_decide_first_skips_the_closed_book_call_when_retrieving():
    lm = LM(FakeLLM(respond=reply))
    retriever = ListRetriever(CHUNKS)
    gated = GatedMethod(QuestionGate(), VanillaRAG(lm, retriever, k=2), lm)
    answer = asyncio.run(gated.answer(QUESTIONS[0]))
    assert answer.gate.retrieve and answer.answer == "1950" and retriever.queries
    assert len(answer.trace.calls) == 1
    assert [s.name for s in answer.trace.spans][0] == "gate"  # decided before any call
    answer = asyncio.run(gated.answer(QUESTIONS[1]))
    assert not answer.gate.retrieve and answer.answer == "lima"


# -- 7 / 8. F_SN over the neighbours used; one tuning function ---------------------------------
def test_f_sn_divides_by_the_neighbours_used_when_the_memory_is_small():
    small = [MEMORY[0], MEMORY[1], MEMORY[2]]  # better, worse, better
    sn = SimilarQueries(TableEmbedder(ANGLES), k=5, novelty=False).fit(small)
    assert sn.score(["q"])[0].f_sn == pytest.approx(2 / 3)
    assert sn.loo()[0].f_sn == pytest.approx(1 / 2)


def test_tune_single_is_the_grid_search_on_one_score():
    """The grid search's rule on one score: best ACC, then lower retrieval, then nearer 0.5."""
    from quaderno.gate.grid import VALUES

    for seed in range(5):
        rng = np.random.default_rng(seed)
        score = rng.random(60).round(1)
        acc_ir, acc_self = rng.integers(0, 2, 60), rng.integers(0, 2, 60)
        best = min(VALUES, key=lambda t: (-np.where(score > t, acc_ir, acc_self).mean(),
                                          (score > t).mean(), abs(t - 0.5), t))
        tau, acc = tune_single(score, acc_self, acc_ir)
        assert tau == best and acc == pytest.approx(
            float(np.where(score > best, acc_ir, acc_self).mean()))


# -- 6. the question is embedded while the closed-book answer is generated -----------------------
class Counting(HashEmbedder):
    """HashEmbedder that records every text it encodes."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.seen: list[str] = []

    def embed_queries(self, texts):
        self.seen += list(texts)
        return super().embed_queries(texts)

    def embed_documents(self, texts):
        self.seen += list(texts)
        return super().embed_documents(texts)


def test_prepared_question_leaves_only_the_response_pass_after_generation(tmp_path):
    labels = label_file(n_train=30, n_val=12, n_test=12)
    bundle = train_bundle(labels, HashEmbedder(64), seed=0, **FAST)
    bundle.save(tmp_path / "g")
    emb = Counting(64)
    emb.spec = bundle.embedder.spec
    loaded = GateBundle.load(tmp_path / "g", emb)
    q, r = "when was the acme company founded", "not sure <answer>unknown</answer>"
    for name in ("ccsk", "rqm", "linear"):
        gate = loaded.gate(name)
        plain = gate.decide([q], [r])[0]
        gate.prepare([q])
        emb.seen.clear()
        prepared = gate.decide([q], [r])[0]
        assert emb.seen == [r], name  # the question was not encoded again
        assert prepared.retrieve == plain.retrieve and prepared.p == pytest.approx(plain.p)
    # the wrapper prepares the question during the closed-book call
    lm = LM(FakeLLM(respond=reply))
    gate = loaded.gate("ccsk")
    gated = GatedMethod(gate, VanillaRAG(lm, ListRetriever(CHUNKS), k=2), lm,
                        allow_other_llm=True)
    emb.seen.clear()
    asyncio.run(gated.answer(q))
    assert emb.seen[0] == q and emb.seen.count(q) == 1


# -- 9. a live run is read like offline scoring ---------------------------------------------------
def test_score_run_gives_the_offline_fields_for_the_runs_own_decisions(tmp_path):
    from method_contract import QUESTION, plausible
    from quaderno.eval.datasets import Context, QARecord
    from quaderno.eval.runner import EvalRunner, RunConfig
    from quaderno.gate.scoring import branch_table, score_decisions, score_run

    records = [QARecord(id="q0", question=QUESTION, answers=["mixed martial artist"],
                        contexts=[Context(id=c.id, title=c.title, text=c.text, supporting=True)
                                  for c in CHUNKS])]
    cfg = RunConfig(dataset="toy", method="vanilla-rag", model="fake:fake", gate="always", k=2)
    results = asyncio.run(EvalRunner(cfg, tmp_path / "run",
                                     lm=LM(FakeLLM(respond=plausible))).run(records))
    labels = [LabelRecord(question=QUESTION.upper(), golden_answers=["mixed martial artist"],
                          answer_no_retrieval="wrestler", answer_retrieval="mixed martial artist",
                          judgement="ir_better")]
    summary = score_run(results, labels)
    offline = score_decisions(labels, [results[0].gate]).model_dump()
    assert summary["matched"] == 1 and summary["score"]["gain_over_never"] == 1.0
    assert {k: v for k, v in summary["score"].items() if k not in ("llm_calls", "mean_gate_ms")} \
        == {k: v for k, v in offline.items() if k not in ("llm_calls", "mean_gate_ms")}
    assert summary["branch_table"] == branch_table(labels, [results[0].gate])
    assert "score" not in score_run(results)


def test_tuning_compares_float32_scores_as_the_gate_does():
    """F_SN = 0.6 in float32 is not > 0.6 for the gate (float32 comparison); tuning must not
    upcast and decide otherwise."""
    score = np.array([0.6] * 4 + [0.8] * 4, dtype=np.float32)
    acc_ir = np.array([1, 1, 1, 1, 1, 1, 1, 1], dtype=float)
    acc_self = np.array([0, 0, 0, 0, 0, 0, 0, 0], dtype=float)
    acc_self[:4], acc_ir[:4] = 1, 0  # at 0.6 retrieval hurts: best τ keeps 0.6 unretrieved
    tau, acc = tune_single(score, acc_self, acc_ir)
    assert acc == 1.0
    assert not (score[:4] > tau).any() and (score[4:] > tau).all()  # the gate's comparison
    assert tau == 0.6
