"""The gate in front of any method (T12): no retrieval and the closed-book answer when the
gate says no, the wrapped method's path (details kept) when it says yes, the decision in the
trace and the Answer, the wrong-LLM refusal, records, ``ask`` and ``eval`` with a gate."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import pytest

from method_contract import CHUNKS, QUESTION, ListRetriever, MethodContract, plausible
from quaderno.ask import aask
from quaderno.errors import ConfigError
from quaderno.eval.datasets import Context, QARecord
from quaderno.eval.records import ResultRecord, read_results
from quaderno.eval.runner import EvalRunner, RunConfig
from quaderno.gate.decision import GateDecision
from quaderno.gate.gates import ConstantGate
from quaderno.gate.wrapper import GatedMethod
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest
from quaderno.methods.answer import Answer
from quaderno.methods.baselines import IRCoT, VanillaRAG
from quaderno.methods.details import ChainDetails


class UnsureGate:
    """Retrieve iff the closed-book response says it does not know; labels from ``llm``."""

    name = "unsure"
    needs_response = True

    def __init__(self, llm: str | None = "fake:fake") -> None:
        self.labels_llm = llm
        self.seen: list[tuple[str, str]] = []

    def decide(self, questions: Sequence[str], responses: Sequence[str]) -> list[GateDecision]:
        self.seen += list(zip(questions, responses))
        return [GateDecision(gate=self.name, retrieve="not sure" in r, f_rqm=0.9, p=0.9,
                             thresholds={"tau": 0.5}) for r in responses]


def reply(closed: str):
    def respond(request: ChatRequest) -> str:
        if request.messages[-1].content.rstrip().endswith("Thought:"):  # IRCoT's first thought
            return "So the answer is: mixed martial artist"
        if "Documents" in request.messages[-1].content:
            return "From the documents. <answer>mixed martial artist</answer>"
        return closed
    return respond


def ask_gated(gate, closed: str, method=VanillaRAG, **kw) -> tuple[Answer, ListRetriever]:
    lm = LM(FakeLLM(respond=reply(closed)))
    retriever = ListRetriever(CHUNKS)
    gated = GatedMethod(gate, method(lm, retriever, k=2), lm, **kw)
    return asyncio.run(gated.answer(QUESTION)), retriever


def test_t12_no_means_the_closed_book_answer_and_no_retrieval():
    gate = UnsureGate()
    answer, retriever = ask_gated(gate, "I know this. <answer>wrestler</answer>")
    assert answer.answer == "wrestler" and answer.explanation.startswith("I know this")
    assert retriever.queries == [] and answer.retrieval_rounds == [] and answer.evidence == []
    names = [s.name for s in answer.trace.spans]
    assert "retrieve" not in names and names == ["answer", "gate"]
    assert len(answer.trace.calls) == 1  # only the closed-book generation
    assert gate.seen == [(QUESTION, "I know this. <answer>wrestler</answer>")]  # r = raw reply
    assert answer.gate is not None and answer.gate.retrieve is False
    span = next(s for s in answer.trace.spans if s.name == "gate")
    assert span.outputs["retrieve"] is False and span.outputs["f_rqm"] == 0.9
    assert span.outputs["thresholds"] == {"tau": 0.5} and span.outputs["seconds"] >= 0
    assert answer.method == "unsure>vanilla-rag"


def test_t12_yes_runs_the_wrapped_method_on_the_same_episode():
    answer, retriever = ask_gated(UnsureGate(), "not sure <answer>boxer</answer>", method=IRCoT)
    assert answer.answer == "mixed martial artist" and retriever.queries
    names = [s.name for s in answer.trace.spans]
    assert names[:3] == ["answer", "gate", "retrieve"]  # one trace: closed book, gate, RAG
    assert answer.retrieval_rounds and answer.evidence
    assert isinstance(answer.details, ChainDetails)  # the wrapped method's details stay
    assert answer.gate.retrieve is True
    back = Answer.model_validate_json(answer.model_dump_json())
    assert back.gate == answer.gate and back.details == answer.details


def test_a_gate_trained_on_another_llms_labels_is_refused_or_warned(caplog):
    with pytest.raises(ConfigError, match="'openai:other'.*fake:fake.*--gate-allow-other-llm"):
        ask_gated(UnsureGate("openai:other"), "x <answer>y</answer>")
    with caplog.at_level(logging.WARNING):
        answer, _ = ask_gated(UnsureGate("openai:other"), "x <answer>y</answer>",
                              allow_other_llm=True)
    assert "ANOTHER MODEL" in caplog.text
    assert answer.gate.notes == ["labels of another LLM: openai:other"]
    # a gate without labels (always, never) fits every LLM
    answer, _ = ask_gated(ConstantGate(False), "x <answer>y</answer>")
    assert answer.gate.branch == "constant" and answer.answer == "y"
    with pytest.raises(ConfigError, match="is not a gate"):
        GatedMethod(object(), VanillaRAG(LM(FakeLLM()), None), LM(FakeLLM()))  # type: ignore


class TestGatedMethodContract(MethodContract):
    """The gated method is a method like any other, whichever way the gate decides."""

    @pytest.fixture(params=[True, False])
    def build(self, request):
        self.needs_retrieval = request.param

        def make(lm, retriever):
            return GatedMethod(ConstantGate(request.param), VanillaRAG(lm, retriever, k=2), lm)
        return make


# -- records, eval, ask -----------------------------------------------------------------
def test_records_keep_the_gate_and_old_lines_still_load(tmp_path):
    decision = GateDecision(gate="ccsk", retrieve=False, branch="fused", g=[0.7, 0.3], p=0.2)
    base = dict(id="1", question="q", answers=["a"], prediction="a", method="m",
                metrics={"em": 1.0}, llm_calls=1, prompt_tokens=1, completion_tokens=1,
                latency_s=0.1)
    line = ResultRecord(**base, gate=decision).model_dump_json()
    assert ResultRecord.model_validate_json(line).gate == decision
    old = ResultRecord(**base).model_dump_json()
    assert '"gate"' not in old  # a run without a gate writes what it always wrote
    assert ResultRecord.model_validate_json(old).gate is None


@pytest.mark.parametrize("gate,retrieves", [("never", False), ("always", True)])
def test_eval_with_a_gate_records_the_decision_and_the_config(tmp_path, gate, retrieves):
    records = [QARecord(id=f"q{i}", question=QUESTION, answers=["mixed martial artist"],
                        contexts=[Context(id=c.id, title=c.title, text=c.text, supporting=True)
                                  for c in CHUNKS]) for i in range(2)]
    cfg = RunConfig(dataset="toy", method="vanilla-rag", model="fake:fake", gate=gate, k=2)
    runner = EvalRunner(cfg, tmp_path / "run", lm=LM(FakeLLM(respond=plausible)))
    results = asyncio.run(runner.run(records))
    assert all(r.gate is not None and r.gate.retrieve is retrieves for r in results)
    assert all(bool(r.retrieval_rounds) is retrieves for r in results)
    assert all(r.llm_calls == 1 for r in results)  # decide first: no closed-book call
    assert read_results(tmp_path / "run" / "results.jsonl") == results
    import json
    assert json.loads((tmp_path / "run" / "config.json").read_text())["gate"] == gate


def test_ask_takes_a_gate(tmp_path):
    lm = LM(FakeLLM(respond=reply("I know. <answer>wrestler</answer>")))
    from quaderno.workspace import Workspace
    answer = asyncio.run(aask(QUESTION, method="vanilla-llm", lm=lm, gate="never",
                              workspace=Workspace(tmp_path / "h")))
    assert answer.gate.gate == "never" and answer.answer == "wrestler"
    gate = UnsureGate("openai:x")
    with pytest.raises(ConfigError, match="another model's knowledge"):
        asyncio.run(aask(QUESTION, method="vanilla-llm", lm=lm, gate=gate,
                         workspace=Workspace(tmp_path / "h")))


def test_report_names_a_gated_run_by_its_gate():
    from quaderno.eval.report import run_labels
    runs = [{"config": {"method": "vanilla-rag", "dataset": "d"}, "dir": "runs/a"},
            {"config": {"method": "vanilla-rag", "dataset": "d", "gate": "gates/webq"},
             "dir": "runs/b"}]
    assert run_labels(runs) == ["vanilla-rag", "webq>vanilla-rag"]
