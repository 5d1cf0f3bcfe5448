"""What a DocSage answer records: the ASK log, the SQL attempts, the result rows with their
sources. Plain models with no dependency on the method, so ``Answer.details`` can hold them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from quaderno.methods.docsage.signals import Signal


class Clarification(BaseModel):
    query: str
    answered: bool
    answer: str = ""
    chunk_ids: list[str] = Field(default_factory=list)


class AskRound(BaseModel):
    iteration: int
    signals: list[Signal] = Field(default_factory=list)   # to ask, one question each
    repairs: list[Signal] = Field(default_factory=list)   # carrying their own fix
    clarifications: list[Clarification] = Field(default_factory=list)
    patches: list[dict] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    schema_hash: str = ""
    trial_rows: int = 0


class AskLog(BaseModel):
    mode: Literal["active", "passive", "single", "generic"]
    # the tuple store's tables offered to the initial schema, as the prompt showed them
    # (earlier questions' tables: the draft depends on what was asked before, and says so)
    offered: list[str] = Field(default_factory=list)
    initial_notes: list[str] = Field(default_factory=list)
    rounds: list[AskRound] = Field(default_factory=list)
    stop_reason: str = ""
    llm_calls: int = 0
    # foreign keys the final schema's column names imply, declared by code after the rounds
    declared: list[str] = Field(default_factory=list)
    # tables left without a primary key, keyed by code by their name column (own_key.py)
    keyed: list[str] = Field(default_factory=list)


class SQLAttempt(BaseModel):
    """One compiled query: the SQL, and the refusal or database error it met, if any."""

    sql: str
    error: str = ""
    # repeat: the same as a query that failed already, not run again
    stage: Literal["compile", "gate", "execute", "repeat", "ok"] = "ok"
    rows: int = 0


class RowSource(BaseModel):
    """Where one extracted tuple came from: its table and values, the chunk and span."""

    tid: int
    table: str
    chunk_id: str
    doc_id: str = ""
    char_start: int = 0
    char_end: int = 0
    values: dict[str, Any] = Field(default_factory=dict)
    extractor: str = ""
    confidence: dict[str, float] = Field(default_factory=dict)
    # the chunk each value came from where it is not the row's own (merged aliases, committee
    # and backtracking corrections), and those corrections with their quoted evidence
    cell_chunks: dict[str, str] = Field(default_factory=dict)
    corrections: list[dict[str, Any]] = Field(default_factory=list)

    def chunk_ids(self) -> list[str]:
        """Every chunk this tuple's values came from, its own first."""
        return list(dict.fromkeys([self.chunk_id, *self.cell_chunks.values()]))


class StatedValue(BaseModel):
    """A numeric result cell as a source chunk writes it ("USD 63907.4M" for 63907400000.0)."""

    row: int  # 1-based, as the synthesis step numbers the rows
    column: str
    value: Any
    quote: str
    chunk_id: str
    doc_id: str = ""


class ResultTable(BaseModel):
    """The query result R with, per row, the tuples it was computed from (Eq. 6)."""

    sql: str = ""  # what ran: the query as the gate passed it (repaired columns included)
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    sources: list[list[RowSource]] = Field(default_factory=list)
    lineage: str = "none"  # full | partial | none
    truncated: bool = False
    stated: list[StatedValue] = Field(default_factory=list)  # see docsage.stated
