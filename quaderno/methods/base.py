"""The method protocol and the base class every method builds on.

A method turns an :class:`~quaderno.methods.episode.Episode` into an
:class:`~quaderno.methods.answer.Answer`: ``run(episode)`` is the method; ``answer(question)``
makes the episode (with a fresh or given trace) and runs it. A gate in front of a method
(CCSK) hands the same episode on, so the trace and provenance stay one.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.answer import Answer
from quaderno.methods.episode import Episode


@runtime_checkable
class Method(Protocol):
    """A question-answering method."""

    name: str

    async def run(self, episode: Episode) -> Answer: ...

    async def answer(self, question: str, *, trace: Trace | None = None) -> Answer: ...


class BaseMethod:
    """Holds the LM and retriever; :meth:`answer` opens the episode for :meth:`run`."""

    name = "method"

    def __init__(self, lm: LM, retriever: Retriever | None = None) -> None:
        self.lm, self.retriever = lm, retriever

    def episode(self, question: str, trace: Trace | None = None) -> Episode:
        return Episode(question, method=self.name, lm=self.lm, retriever=self.retriever,
                       trace=trace or Trace(label=question))

    async def answer(self, question: str, *, trace: Trace | None = None) -> Answer:
        return await self.run(self.episode(question, trace))

    async def run(self, episode: Episode) -> Answer:
        raise NotImplementedError(f"{type(self).__name__} must implement run(episode)")
