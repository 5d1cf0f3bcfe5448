"""The LLM steps of missing-knowledge RAG, declared once over the paper's prompts."""

from __future__ import annotations

from quaderno.errors import ParseError
from quaderno.llm.parsing import strip_thinking
from quaderno.llm.steps import Step
from quaderno.methods.misknow import prompts
from quaderno.methods.misknow.judgment import Judgment

_LINE = r'[^\n]'
# the embedded model writes one short line; servers get the plain prompt
READER_GRAMMAR = f"root ::= [^\\n ] {_LINE}{{0,300}}\n"


def reader_answer(text: str) -> str:
    """The reader's reply is the answer: its first non-empty line, without an "Answer:"
    label or surrounding quotes."""
    for line in strip_thinking(text).splitlines():
        line = line.strip().removeprefix("## Answer").strip()
        for label in ("Answer:", "answer:", "A:"):
            line = line.removeprefix(label).strip()
        line = line.strip("\"'` ").strip()
        if line:
            return line
    raise ParseError("the reply is empty")


FIRST_ROUND = Step(name="misknow.first_answer", system=prompts.FIG5_SYSTEM,
                   instruction=prompts.FIRST_ROUND_USER, inputs=("contexts", "question"),
                   parse=reader_answer, grammar=READER_GRAMMAR, max_tokens=64)
REASONER = Step(name="misknow.judge", system=prompts.FIG4_SYSTEM, instruction=prompts.FIG4_USER,
                inputs=("question", "contexts", "first_answer"), output=Judgment,
                describe_output=False, max_tokens=2048)
FINAL = Step(name="misknow.final_answer", system=prompts.FIG5_SYSTEM,
             instruction=prompts.FIG5_USER, inputs=("contexts", "missing_block", "question"),
             parse=reader_answer, grammar=READER_GRAMMAR, max_tokens=64)
