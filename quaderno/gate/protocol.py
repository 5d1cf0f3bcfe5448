"""The one interface every retrieve-or-not gate meets (CCSK and the Table 2 baselines)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from quaderno.gate.decision import GateDecision

CLOSED_BOOK = "vanilla-llm"  # the method whose answer is the closed-book response r
UNKNOWN_LLM = "unknown"  # labels_llm of a trained gate whose labels carry no provenance


@runtime_checkable
class Gate(Protocol):
    """Decides, per question, whether to retrieve.

    ``needs_response``: the gate reads the closed-book response r (RQM, CCSK), so r is
    generated before it decides; a gate that reads only the question (SN, SKR-kNN) could
    decide first. ``labels_llm``: the LLM whose labels trained it (None: no labels, e.g. ``always``;
    :data:`UNKNOWN_LLM`: labels of an unknown LLM, treated like another LLM's). A gate that
    reads the response may also have ``prepare(questions)``: the wrapper calls it in a worker
    thread while the closed-book answer is generated (e.g. to embed the question)."""

    name: str
    needs_response: bool
    labels_llm: str | None

    def decide(self, questions: Sequence[str], responses: Sequence[str]
               ) -> list[GateDecision]: ...
