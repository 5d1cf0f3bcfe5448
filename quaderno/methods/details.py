"""Typed per-method details of an answer: what a method built on its way, beyond the span.

``Answer.details`` holds one of these, told apart by ``kind``; the same models serialize it
and read it back (a result record, an HTTP reply). A new method adds its model here and to
:data:`MethodDetails`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from quaderno.methods.page import Page


class PagerDetails(BaseModel):
    """PAGER: the page the answer was generated from, with each section's provenance."""

    kind: Literal["pager"] = "pager"
    page: Page


class NotesDetails(BaseModel):
    """PAGER without initialization: the notes after each summarize round."""

    kind: Literal["notes"] = "notes"
    notes: list[str] = Field(default_factory=list)


class ChainDetails(BaseModel):
    """Iterative baselines: the generation of each round (IRCoT's reasoning sentences,
    Iter-RetGen's drafts) and the query each round retrieved with."""

    kind: Literal["chain"] = "chain"
    steps: list[str] = Field(default_factory=list)
    queries: list[str] = Field(default_factory=list)


MethodDetails = Annotated[PagerDetails | NotesDetails | ChainDetails,
                          Field(discriminator="kind")]
