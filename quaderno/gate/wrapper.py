"""A gate in front of any method (CCSK §3.1, spec A10).

:class:`GatedMethod` answers closed-book first (the ``vanilla-llm`` method's own step, on
the same episode), asks the gate, and then either returns that closed-book answer — no
retrieval happens — or runs the wrapped method on the same :class:`Episode`, so the trace
and the provenance stay one. The decision (signals, thresholds, Eq. 7's branch, the time it
took) is a ``gate`` span in the trace and ``Answer.gate``; the wrapped method's own
``details`` stay as they are.

Labels belong to the LLM they were made with: a gate trained on another LLM's labels is
refused, unless ``allow_other_llm`` is set, and then a warning is logged and noted in every
decision.
"""

from __future__ import annotations

import asyncio
import logging
import time

from quaderno.errors import ConfigError
from quaderno.gate.protocol import Gate
from quaderno.llm.lm import LM
from quaderno.methods.answer import Answer
from quaderno.methods.base import BaseMethod, Method
from quaderno.methods.episode import Episode

log = logging.getLogger(__name__)

CLOSED_BOOK = "vanilla-llm"


def check_llm(gate: Gate, lm: LM, *, allow_other_llm: bool = False) -> list[str]:
    """Refuse (ConfigError) a gate whose labels were made with another LLM than ``lm``; with
    ``allow_other_llm`` warn loudly instead. Returns the notes to add to each decision."""
    if gate.labels_llm is None or gate.labels_llm == lm.model_id:
        return []
    message = (f"gate {gate.name!r} was trained on labels made with {gate.labels_llm!r}, but "
               f"the answering LLM is {lm.model_id!r}: its decisions are about another "
               "model's knowledge")
    if not allow_other_llm:
        raise ConfigError(f"{message}. Label and train a gate for this LLM (quaderno gate "
                          "label / train), or pass --gate-allow-other-llm to use it anyway")
    log.warning("%s (allowed by --gate-allow-other-llm)", message.upper())
    return [f"labels of another LLM: {gate.labels_llm}"]


class GatedMethod(BaseMethod):
    """``gate`` in front of ``method``: closed-book answer, decide, maybe run ``method``."""

    def __init__(self, gate: Gate, method: Method, lm: LM, *, allow_other_llm: bool = False,
                 closed_book: Method | None = None) -> None:
        if not isinstance(gate, Gate):
            raise ConfigError(f"{gate!r} is not a gate (it needs name, needs_response, "
                              "labels_llm and decide)")
        super().__init__(lm, getattr(method, "retriever", None))
        self.gate, self.method = gate, method
        self.notes = check_llm(gate, lm, allow_other_llm=allow_other_llm)
        if closed_book is None:
            from quaderno.methods.registry import make_method

            closed_book = make_method(CLOSED_BOOK, lm, None)
        self.closed_book = closed_book
        self.name = f"{gate.name}>{method.name}"

    async def run(self, episode: Episode) -> Answer:
        closed = await self.closed_book.run(episode)
        response = closed.explanation or closed.answer
        with episode.trace.span("gate", gate=self.gate.name) as span:
            t0 = time.perf_counter()
            decision = (await asyncio.to_thread(self.gate.decide, [episode.question],
                                                [response]))[0]
            decision.seconds = time.perf_counter() - t0
            decision.notes.extend(self.notes)
            span.outputs = decision.model_dump(mode="json", exclude_none=True)
        if not decision.retrieve:
            return closed.model_copy(update={"gate": decision})
        answer = await self.method.run(episode)
        return answer.model_copy(update={"gate": decision})
