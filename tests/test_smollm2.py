"""The embedded default model (SmolLM2-135M, llama.cpp) under constrained decoding."""

from __future__ import annotations

import asyncio

import jsonschema
import pytest
from pydantic import BaseModel, Field

pytest.importorskip("llama_cpp")

from quaderno.errors import LLMContextLengthError  # noqa: E402
from quaderno.llm.lm import LM  # noqa: E402
from quaderno.llm.llama_cpp_backend import LlamaCppLLM, default_model_path  # noqa: E402
from quaderno.llm.steps import Step  # noqa: E402
from quaderno.llm.trace import Trace  # noqa: E402
from quaderno.llm.types import ChatRequest  # noqa: E402

pytestmark = pytest.mark.model


class CityFacts(BaseModel):
    # maxLength bounds each string in the grammar: a tiny model otherwise may ramble
    # inside a string until max_tokens cuts the JSON short
    city: str = Field(description="the city named in the question", max_length=40)
    country: str = Field(max_length=40)
    population_millions: float
    landmarks: list[str] = Field(description="up to three landmarks", max_length=3)


@pytest.fixture(scope="module")
def smollm2():
    return LlamaCppLLM(n_ctx=1024)


def test_default_model_ships_in_the_wheel():
    path = default_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000


def test_constrained_json_step_validates_against_its_schema(smollm2):
    step = Step(name="city", instruction="Give facts about the city in: {question}",
                inputs=("question",), output=CityFacts, max_tokens=256)
    trace = Trace()
    result = asyncio.run(step.run(LM(smollm2), question="Tell me about Paris.", trace=trace))
    jsonschema.validate(result.value.model_dump(), CityFacts.model_json_schema())
    raw_obj = __import__("json").loads(result.raw)  # constrained: the raw reply is pure JSON
    assert set(raw_obj) == {"city", "country", "population_millions", "landmarks"}
    assert trace.calls[0].constrained and trace.calls[0].usage.completion_tokens > 0


def test_grammar_constrains_free_text(smollm2):
    grammar = 'root ::= "<answer>" [A-Za-z ]{1,30} "</answer>"'
    r = asyncio.run(smollm2.achat(ChatRequest.of("Capital of France?", grammar=grammar,
                                                 max_tokens=30)))
    assert r.text.startswith("<answer>") and r.text.endswith("</answer>")


def test_context_too_long_is_typed(smollm2):
    with pytest.raises(LLMContextLengthError, match="does not fit"):
        asyncio.run(smollm2.achat(ChatRequest.of("word " * 3000, max_tokens=10)))


@pytest.fixture(scope="module")
def smollm2_logprobs():
    return LlamaCppLLM(n_ctx=512, logprobs=True)


def test_scoring_a_reply_matches_the_logprobs_of_generating_it(smollm2_logprobs):
    """Differential: teacher-forcing the model's own greedy reply gives back the
    log-probabilities llama.cpp reported while generating it."""
    llm = smollm2_logprobs
    question = "What is the capital of France?"
    generated = asyncio.run(llm.achat(ChatRequest.of(question, max_tokens=8, temperature=0.0,
                                                     logprobs=True)))
    scored = asyncio.run(llm.ascore(ChatRequest.of(question).messages, generated.text))
    assert scored.usage == generated.usage  # the same prompt, the same reply tokens
    assert [t.token for t in scored.logprobs] == [t.token for t in generated.logprobs]
    for mine, theirs in zip(scored.logprobs, generated.logprobs):
        assert mine.logprob == pytest.approx(theirs.logprob, abs=0.05)
    again = asyncio.run(llm.achat(ChatRequest.of(question, max_tokens=8, temperature=0.0)))
    assert again.text == generated.text  # scoring leaves the model's state clean


def test_context_raises_the_probability_of_the_answer(smollm2):
    lm = LM(smollm2)
    assert lm.supports_scoring
    plain = asyncio.run(lm.score("What is the capital of France?", "Paris"))
    helped = asyncio.run(lm.score("Paris is the capital of France.\n"
                                  "What is the capital of France?", "Paris"))
    assert sum(t.logprob for t in helped) > sum(t.logprob for t in plain)
    assert all(t.logprob < 0 for t in plain + helped)
