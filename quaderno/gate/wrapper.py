"""A gate in front of any method (CCSK §3.1, spec A10).

:class:`GatedMethod` asks a gate that reads the closed-book response (``needs_response``:
RQM, CCSK) after answering closed-book (the ``vanilla-llm`` method's own step, on the same
episode); a gate that reads only the question (constant, SN, the kNN rules) decides first
("decide first"), so a question it sends to retrieval costs no closed-book call. Then
either the closed-book answer is returned — no retrieval happens — or the wrapped method
runs on the same :class:`Episode`, so the trace and the provenance stay one. The LLM calls
per question are those of :func:`quaderno.gate.scoring.llm_calls`. The decision (signals,
thresholds, Eq. 7's branch, the time it took) is a ``gate`` span in the trace and
``Answer.gate``; the wrapped method's own ``details`` stay as they are.

Labels belong to the LLM they were made with: a gate trained on another LLM's labels is
refused, and so is one whose labels' LLM is unknown, unless ``allow_other_llm`` is set, and
then a warning is logged and noted in every decision.
"""

from __future__ import annotations

import asyncio
import logging
import time

from quaderno.errors import ConfigError
from quaderno.gate.decision import GateDecision
from quaderno.gate.protocol import CLOSED_BOOK, UNKNOWN_LLM, Gate
from quaderno.llm.lm import LM
from quaderno.methods.answer import Answer
from quaderno.methods.base import BaseMethod, Method
from quaderno.methods.episode import Episode

log = logging.getLogger(__name__)


def check_llm(gate: Gate, lm: LM | str | None, *, allow_other_llm: bool = False) -> list[str]:
    """Refuse (ConfigError) a gate whose labels were made with another LLM than ``lm`` (an
    :class:`LM` or a model id; None: the answers' LLM is unknown), or with an unknown LLM;
    with ``allow_other_llm`` warn loudly instead. A gate without labels (``always``,
    ``never``) passes. Returns the notes to add to each decision."""
    if gate.labels_llm is None:
        return []
    model_id = lm.model_id if isinstance(lm, LM) else lm
    if gate.labels_llm != UNKNOWN_LLM and gate.labels_llm == model_id:
        return []
    if gate.labels_llm == UNKNOWN_LLM:
        message = (f"gate {gate.name!r} was trained on labels whose LLM is unknown (the label "
                   "file has no provenance), so its decisions may be about another model's "
                   "knowledge")
        note = "labels of an unknown LLM"
    elif model_id is None:
        message = (f"gate {gate.name!r} was trained on labels made with {gate.labels_llm!r}, "
                   "but the answering LLM is unknown (the answers carry no provenance)")
        note = f"labels of {gate.labels_llm}; the answering LLM is unknown"
    else:
        message = (f"gate {gate.name!r} was trained on labels made with {gate.labels_llm!r}, "
                   f"but the answering LLM is {model_id!r}: its decisions are about another "
                   "model's knowledge")
        note = f"labels of another LLM: {gate.labels_llm}"
    if not allow_other_llm:
        raise ConfigError(f"{message}. Label and train a gate for this LLM (quaderno gate "
                          "label / train), or pass --gate-allow-other-llm to use it anyway")
    log.warning("%s (allowed by --gate-allow-other-llm)", message.upper())
    return [note]


class GatedMethod(BaseMethod):
    """``gate`` in front of ``method``: decide (after a closed-book answer when the gate reads
    it), then either the closed-book answer or ``method``."""

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

    async def _decide(self, episode: Episode, response: str) -> GateDecision:
        with episode.trace.span("gate", gate=self.gate.name) as span:
            t0 = time.perf_counter()
            decision = (await asyncio.to_thread(self.gate.decide, [episode.question],
                                                [response]))[0]
            decision.seconds = time.perf_counter() - t0
            decision.notes.extend(self.notes)
            span.outputs = decision.model_dump(mode="json", exclude_none=True)
        return decision

    async def run(self, episode: Episode) -> Answer:
        if not self.gate.needs_response:  # decide first: no closed-book call when retrieving
            decision = await self._decide(episode, "")
            if decision.retrieve:
                answer = await self.method.run(episode)
                return answer.model_copy(update={"gate": decision})
            closed = await self.closed_book.run(episode)
            return closed.model_copy(update={"gate": decision})
        # the question is known first: embed it in a worker thread while the closed-book
        # answer is generated (submitted now, before the generation holds the loop)
        prepare = getattr(self.gate, "prepare", None)
        warm = asyncio.get_running_loop().run_in_executor(
            None, prepare, [episode.question]) if prepare is not None else None
        try:
            closed = await self.closed_book.run(episode)
        finally:
            if warm is not None:
                await warm
        decision = await self._decide(episode, closed.explanation or closed.answer)
        if not decision.retrieve:
            return closed.model_copy(update={"gate": decision})
        answer = await self.method.run(episode)
        return answer.model_copy(update={"gate": decision})
