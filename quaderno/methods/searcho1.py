"""Search-o1 (Li et al., 2025; sunnynexus/Search-o1 ``scripts/run_search_o1.py``), a PAGER
Table 1 baseline: a reasoning model that searches in the middle of its reasoning, with each
search's documents distilled by a Reason-in-Documents step.

As the official loop runs it (multi-hop QA settings):

- the model reasons step by step and may write ``<|begin_search_query|> q <|end_search_query|>``
  (generation stops there); the final answer goes in ``\\boxed{...}``;
- a new query, while fewer than ``max_searches`` (10) were made: the top ``k`` (10) documents
  are retrieved; the Reason-in-Documents step reads them with the previous reasoning steps
  (numbered; when more than 5, the first, the last four and those holding a search kept, the
  rest "...") and the query, and returns what helps after "**Final Information**"; that text is
  appended as ``<|begin_search_result|> ... <|end_search_result|>`` and reasoning continues;
- a repeated query, or one past the limit, gets a notice instead of results;
- a turn that ends without a query ends the loop; at most ``max_turns`` (15) turns;
- the answer is the last ``\\boxed{}`` (its ``\\text{}`` when present), "" without one.

Differences, recorded here: the official code continues one raw completion prompt; through a
chat API the reasoning so far is given back in the user message and the model asked to go
on. The web search (Bing + page fetching) is the knowledge base's retriever. Prompts carry
the meaning of the official ones in quaderno's words. The span rules reduce the boxed answer.
"""

from __future__ import annotations

import re

from quaderno.errors import ConfigError, StepError
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.steps import Step, text_output
from quaderno.methods.answer import Answer
from quaderno.methods.base import BaseMethod
from quaderno.methods.details import ChainDetails
from quaderno.methods.episode import Episode, format_docs
from quaderno.methods.span import to_span

BEGIN_Q, END_Q = "<|begin_search_query|>", "<|end_search_query|>"
BEGIN_R, END_R = "<|begin_search_result|>", "<|end_search_result|>"
# for the embedded model (constrained decoding): a thought, then a query or the boxed answer
REASON_GRAMMAR = ('root ::= [^\\n<\\\\]{10,300} (query | answer)\n'
                  'query ::= "' + BEGIN_Q + '" [^<\\n]{3,80} "' + END_Q + '"\n'
                  'answer ::= " \\\\boxed{" [^}\\n]{1,60} "}"\n')
READ_GRAMMAR = 'root ::= "**Final Information**\\n" [^\\n<]{5,300}\n'

REASON = Step(
    name="searcho1.reason", inputs=("limit", "question", "reasoning"), parse=text_output,
    max_tokens=2048, params={"stop": (END_Q,)}, grammar=REASON_GRAMMAR,
    system=("You are a reasoning assistant who can search to answer the user's question "
            "accurately. To search, write " + BEGIN_Q + " your query " + END_Q + "; the "
            "system then searches, reads the documents and gives you the helpful information "
            "as " + BEGIN_R + " ... " + END_R + ". You may search several times. With the "
            "information you need, continue reasoning. For a "
            "question needing two facts, for instance: search the first, read the result, "
            "then search the second with what you learned."),
    instruction=("You may search at most {limit} times in all. Answer the question below. "
                 "Think step by step, and give your final answer as \\boxed{{YOUR_ANSWER}}."
                 "\n\nQuestion:\n{question}\n\n{reasoning}"))
READ_DOCS = Step(
    name="searcho1.reason_in_documents", inputs=("previous", "query", "docs"),
    parse=text_output, max_tokens=1024, grammar=READ_GRAMMAR,
    instruction=("Read the searched documents with the previous reasoning steps and the "
                 "current search query in mind. Take from them the factual information that "
                 "answers the current query and helps continue the reasoning for the original "
                 "question, accurately.\n\nWrite it after a line **Final Information**. If the "
                 "documents hold nothing helpful for the query, write:\n**Final Information**\n"
                 "No helpful information found.\n\nPrevious reasoning steps:\n{previous}\n\n"
                 "Current search query:\n{query}\n\nSearched documents:\n{docs}"))
LIMIT_NOTICE = "The search limit is reached: no more searches are allowed."
REPEAT_NOTICE = "This query was already searched: use its earlier results."


def final_information(reply: str) -> str:
    """The official 'infogen' extraction: the text after the last "**Final Information**"
    line, joined onto one line."""
    marker = "\n**Final Information**"
    text = "\n" + reply
    if marker in text:
        return text.split(marker)[-1].replace("\n", "").strip("`").strip()
    return "No helpful information found."


def boxed(text: str) -> str:
    """The last ``\\boxed{...}`` (its ``\\text{...}`` when present), "" without one."""
    found = re.findall(r"\\boxed\{(.*)\}", text)
    if not found:
        return ""
    inner = re.findall(r"\\text\{(.*)\}", found[-1])
    return (inner[-1] if inner else found[-1]).strip("()")


def previous_steps(output: str) -> str:
    """The official truncation of the reasoning so far into numbered steps."""
    lines = output.replace("\n\n", "\n").split("\n")
    steps = [f"Step {i + 1}: {line}" for i, line in enumerate(lines)]
    if len(steps) <= 5:
        return "\n\n".join(steps)
    kept: list[str] = []
    for i, step in enumerate(steps):
        if i == 0 or i >= len(steps) - 4 or BEGIN_Q in step or BEGIN_R in step:
            kept.append(step)
        elif not kept or kept[-1] != "...":
            kept.append("...")
    return "\n\n".join(kept)


class SearchO1(BaseMethod):
    name = "search-o1"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 10,
                 max_searches: int = 10, max_turns: int = 15) -> None:
        for label, value in (("k", k), ("max_searches", max_searches),
                             ("max_turns", max_turns)):
            if value < 1:
                raise ConfigError(f"{label} must be at least 1, got {value}")
        super().__init__(lm, retriever)
        self.k, self.max_searches, self.max_turns = k, max_searches, max_turns

    async def run(self, episode: Episode) -> Answer:
        q, trace = episode.question, episode.trace
        output, queries, steps = "", [], []
        for _ in range(self.max_turns):
            so_far = (f"Your reasoning so far (continue from its end):\n{output}"
                      if output else "")
            with trace.span("searcho1.reason", turn=len(steps) + 1) as span:
                try:
                    text = (await REASON.run(episode.lm, limit=str(self.max_searches),
                                             question=q, reasoning=so_far, trace=trace)).value
                except StepError as exc:
                    text = None
                    trace.fallback(f"reasoning turn unusable ({exc}); stopping", span)
                span.outputs = {"text": text}
            if text is None:
                break
            # the stop string is not returned: put it back where a query was opened
            if BEGIN_Q in text and END_Q not in text.split(BEGIN_Q)[-1]:
                text += END_Q
            steps.append(text)
            output += text
            query = text.split(BEGIN_Q)[-1].split(END_Q)[0].strip() if BEGIN_Q in text else ""
            if not (query and output.rstrip().endswith(END_Q)):
                break  # no search asked: the reasoning is finished
            if len(queries) >= self.max_searches:
                output += f"\n{BEGIN_R}\n{LIMIT_NOTICE}\n{END_R}\n"
                continue
            if query in queries:
                output += f"\n{BEGIN_R}\n{REPEAT_NOTICE}\n{END_R}\n"
                continue
            queries.append(query)
            hits = await episode.retrieve(query, self.k)
            with trace.span("searcho1.reason_in_documents", query=query) as span:
                try:
                    reply = (await READ_DOCS.run(episode.lm, previous=previous_steps(output),
                                                 query=query, docs=format_docs(hits),
                                                 trace=trace)).value
                    info = final_information(reply)
                except StepError as exc:
                    info = "No helpful information found."
                    trace.fallback(f"reason-in-documents unusable ({exc})", span)
                span.outputs = {"information": info}
            output += f"\n\n{BEGIN_R}{info}{END_R}\n\n"
        else:
            trace.fallback(f"stopped at max_turns={self.max_turns}")
        answer = boxed(output)
        if not answer:
            trace.fallback("no \\boxed{} answer: no answer (the official extraction)")
        else:
            answer, _ = to_span(q, answer)
        return episode.finish(answer, explanation=output, context=output,
                              details=ChainDetails(steps=steps, queries=queries))
