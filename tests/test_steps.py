"""Typed steps with the fake LLM: rendering, constraints, parsing, repair, typed failure, traces."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel, Field

from quaderno.errors import ConfigError, LLMError, ParseError, StepError
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.parsing import extract_tag
from quaderno.llm.steps import Step
from quaderno.llm.trace import Trace


class Judgment(BaseModel):
    thought: str = Field(description="why")
    judge: bool = Field(description="true when the knowledge suffices")
    missing_knowledge: str = ""
    query: str = ""


class Span(BaseModel):
    answer: str = Field(min_length=1)


JUDGE = Step(name="judge", instruction="Question: {question}\nDraft: {draft}",
             inputs=("question", "draft"), output=Judgment)
ANSWER = Step(name="answer", instruction="Q: {q}", inputs=("q",),
              parse=lambda t: extract_tag(t, "answer"),
              format_hint="End with <answer>short answer</answer>.")


def run(step, lm, **inputs):
    return asyncio.run(step.run(lm, **inputs))


def test_json_step_renders_fields_and_validates():
    fake = FakeLLM(['{"thought": "t", "judge": true}'])
    result = run(JUDGE, LM(fake), question="Who?", draft="Him")
    assert result.value == Judgment(thought="t", judge=True) and result.attempts == 1
    prompt = fake.requests[0].messages[-1].content
    assert prompt.startswith("Question: Who?\nDraft: Him")
    assert '- "judge" (true/false): true when the knowledge suffices' in prompt
    assert fake.requests[0].json_schema == Judgment.model_json_schema()


def test_schema_sent_and_flagged_when_backend_constrains():
    fake = FakeLLM(['{"thought": "t", "judge": false}'], supports_schema=True)
    trace = Trace()
    run(JUDGE, LM(fake), question="q", draft="d", trace=trace)
    assert trace.calls[0].constrained and trace.calls[0].step == "judge"


def test_repair_reask_then_success():
    fake = FakeLLM(["I think the answer is no.", '```json\n{"thought": "x", "judge": false,}\n```'])
    trace = Trace()
    result = run(JUDGE, LM(fake), question="q", draft="d", trace=trace)
    assert result.repaired and result.value.judge is False
    second = fake.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "user"]
    assert second[1].content == "I think the answer is no."
    assert "no JSON object found" in second[2].content
    assert len(trace.fallbacks) == 1 and "re-asked" in trace.fallbacks[0]


def test_repairs_sets_how_many_re_asks_a_call_may_make():
    """A caller with a call budget (ASK) asks for no re-ask where only one call fits."""
    bad = "I think the answer is no."
    fake = FakeLLM([bad, '{"thought": "x", "judge": true}'])
    trace = Trace()
    with pytest.raises(StepError, match="no valid output and no repair re-ask allowed") as err:
        run(JUDGE, LM(fake), question="q", draft="d", trace=trace, repairs=0)
    assert err.value.attempts == 1 and len(fake.requests) == 1
    assert trace.fallbacks == ["judge: unusable reply (no JSON object found in the reply); "
                               "gave up"]
    fake = FakeLLM([bad, bad, '{"thought": "x", "judge": true}'])
    result = run(JUDGE, LM(fake), question="q", draft="d", repairs=2)
    assert result.attempts == 3 and result.value.judge and len(fake.requests) == 3
    with pytest.raises(StepError, match="after 2 repair re-asks"):
        run(JUDGE, LM(FakeLLM([bad] * 3)), question="q", draft="d", repairs=2)
    with pytest.raises(ValueError, match="judge: repairs must be 0 or more, got -1"):
        run(JUDGE, LM(FakeLLM([bad])), question="q", draft="d", repairs=-1)


def test_empty_but_valid_reply_is_a_typed_error():
    fake = FakeLLM(['{"answer": ""}', '{"answer": ""}'])
    with pytest.raises(StepError, match="step 'span'.*answer") as err:
        run(Step(name="span", instruction="{q}", inputs=("q",), output=Span), LM(fake), q="x")
    assert err.value.raw == '{"answer": ""}'


def test_text_step_with_parser_and_hint():
    fake = FakeLLM(["no tag here", "ok <answer>Paris</answer>"])
    result = run(ANSWER, LM(fake), q="capital of France")
    assert result.value == "Paris" and result.attempts == 2
    assert fake.requests[0].messages[-1].content.endswith("End with <answer>short answer</answer>.")
    with pytest.raises(StepError):
        run(ANSWER, LM(FakeLLM(["", "   "])), q="x")


def test_grammar_only_sent_to_backends_that_support_it():
    step = Step(name="g", instruction="{q}", inputs=("q",), grammar='root ::= "yes" | "no"')
    plain = FakeLLM(["yes"])
    run(step, LM(plain), q="x")
    assert plain.requests[0].grammar is None
    gram = FakeLLM(["no"], supports_grammar=True)
    run(step, LM(gram), q="x")
    assert gram.requests[0].grammar == 'root ::= "yes" | "no"'


def test_declaration_and_input_errors():
    with pytest.raises(ConfigError, match=r"undeclared inputs \['other'\]"):
        Step(name="bad", instruction="{q} {other}", inputs=("q",))
    with pytest.raises(ConfigError, match="missing inputs"):
        run(JUDGE, LM(FakeLLM(["{}"])), question="q")
    with pytest.raises(ConfigError, match="unknown inputs"):
        run(JUDGE, LM(FakeLLM(["{}"])), question="q", draft="d", extra="e")


def test_llm_errors_propagate_and_are_traced():
    trace = Trace()
    fake = FakeLLM().enqueue(LLMError("server down"))
    with pytest.raises(LLMError, match="server down"):
        run(JUDGE, LM(fake), question="q", draft="d", trace=trace)
    assert trace.calls[0].error == "server down"


def test_trace_spans_and_json_round_trip():
    trace = Trace(label="q1")
    fake = FakeLLM(['{"thought": "t", "judge": true}'])
    with trace.span("judge-phase", question="q") as span:
        run(JUDGE, LM(fake), question="q", draft="d", trace=trace)
        span.outputs["judge"] = True
    with pytest.raises(ParseError):
        with trace.span("failing"):
            raise ParseError("boom")
    data = json.loads(trace.model_dump_json())
    assert [s["name"] for s in data["spans"]] == ["judge-phase", "failing"]
    assert data["spans"][1]["error"] == "ParseError: boom"
    assert data["calls"][0]["prompt"][0]["role"] == "user"
    summary = trace.summary()
    assert summary["llm_calls"] == 1 and summary["completion_tokens"] == 4
    assert Trace.model_validate_json(trace.model_dump_json()).summary() == summary


def test_fake_llm_modes():
    assert asyncio.run(LM(FakeLLM(echo=True)).complete("hello")) == "hello"
    assert asyncio.run(LM(FakeLLM(respond=lambda r: str(len(r.messages)))).complete("x")) == "1"
    fake = FakeLLM()
    with pytest.raises(LLMError, match="no reply queued"):
        asyncio.run(LM(fake).complete("x"))
    with pytest.raises(ConfigError):
        FakeLLM(["a"], echo=True)
