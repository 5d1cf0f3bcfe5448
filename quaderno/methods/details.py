"""Typed per-method details of an answer: what a method built on its way, beyond the span.

``Answer.details`` holds one of these, told apart by ``kind``; the same models serialize it
and read it back (a result record, an HTTP reply). A new method adds its model here and to
:data:`MethodDetails`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from quaderno.methods.docsage.records import AskLog, ResultTable, SQLAttempt
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.page import Page


class PagerDetails(BaseModel):
    """PAGER: the page the answer was generated from, with each section's provenance, and
    what the loop did on the way (fills, retries, appended sections, the outline's repairs,
    repeated sub-queries re-asked): what a report reads to see when PAGER degenerated."""

    kind: Literal["pager"] = "pager"
    page: Page
    fills: int = 0
    retries: list[str] = Field(default_factory=list)
    appended: list[str] = Field(default_factory=list)
    fallback_fills: list[str] = Field(default_factory=list)
    outline_fallbacks: list[str] = Field(default_factory=list)
    subquery_reasks: list[str] = Field(default_factory=list)


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


class StructDetails(BaseModel):
    """StructRAG: the structure used ("none" without documents) and the router's reply ("" for
    a fixed route), what was built from each document, the info the decomposer saw, its
    sub-questions and the knowledge the merge step read."""

    kind: Literal["struct"] = "struct"
    structure: str
    route_reply: str = ""
    info: str = ""
    structures: list[str] = Field(default_factory=list)
    subqueries: list[str] = Field(default_factory=list)
    knowledge: str = ""


class MisknowJudgment(BaseModel):
    """The reasoner's judgment (Fig. 4) as it was read."""

    thought: str = ""
    judge: bool | None = None
    missing_knowledge: list[str] = Field(default_factory=list)
    query: list[str] = Field(default_factory=list)


class MisknowDetails(BaseModel):
    """Missing-knowledge RAG: the fields of the paper's case studies (Tables 6–7) and the path
    the question took (second-round, sufficient, missing-without-queries, unreadable)."""

    kind: Literal["misknow"] = "misknow"
    first_answer: str
    path: str
    judgment: MisknowJudgment | None = None
    reasoning: str = ""
    reasoning_source: str = "none"  # reasoning_content | think | text before the JSON | none
    round1: list[str] = Field(default_factory=list)
    round2: list[str] = Field(default_factory=list)
    duplicates_skipped: int = 0


class CompletionSearch(BaseModel):
    """One search DocSage's completion made for an entity's empty cells ("Bryskound
    Holdings offices sector"), and the chunks it took to read."""

    query: str
    chunks: list[str] = Field(default_factory=list)


class DocSageDetails(BaseModel):
    """DocSage: the schema discovered for the question, the tables extracted into it (with
    CLEAR's report), the SQL and its result rows, each row traced to its source chunks."""

    kind: Literal["docsage"] = "docsage"
    variant: str
    db_schema: Schema | None = None
    ask: AskLog | None = None
    chunks_read: int = 0
    scope_cut: bool = False  # more chunks matched than the extraction budget allowed
    completed: list[str] = Field(default_factory=list)  # chunks read to fill needed cells
    completion_searches: list[CompletionSearch] = Field(default_factory=list)  # in order
    clear: dict = Field(default_factory=dict)
    # tuples this question's own extraction calls read (ASK's trials, completion, CLEAR),
    # not those the tuple store held: what its extraction cost paid for (None: a record
    # made before it was counted)
    tuples_new: int | None = None
    # invented keys numbered per chunk before the tables were queried (docsage.scoped_ids)
    scoped_keys: list[str] = Field(default_factory=list)
    tables: dict[str, list[dict]] = Field(default_factory=dict)  # first rows of each table
    table_sizes: dict[str, int] = Field(default_factory=dict)  # every table's row count
    sql: list[SQLAttempt] = Field(default_factory=list)
    result: ResultTable | None = None
    cited_rows: list[int] = Field(default_factory=list)
    # numbers the synthesized answer gave that the result does not hold (docsage.grounded),
    # and whether the answer is the result rows because the model's answers were not borne
    # out by the result (such numbers, "not found" from rows, no number from one), and why
    ungrounded: list[str] = Field(default_factory=list)
    from_rows: bool = False
    from_rows_why: str = ""
    # numbers its explanation gave that the result does not hold: the explanation is left out
    explanation_ungrounded: list[str] = Field(default_factory=list)


MethodDetails = Annotated[PagerDetails | NotesDetails | ChainDetails | StructDetails
                          | MisknowDetails | DocSageDetails, Field(discriminator="kind")]
