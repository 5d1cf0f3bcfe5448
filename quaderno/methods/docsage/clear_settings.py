"""CLEAR's switches (:class:`ClearConfig`) and what a run did (:class:`ClearReport`).

Kept apart from :mod:`.clear`'s pipeline and :mod:`.corrector`'s correction state, which
both read and write them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from quaderno.methods.docsage.committee import VoteRule


class ClearConfig(BaseModel):
    """CLEAR's switches and budgets (spec §5 defaults)."""

    level_a: bool = True
    level_b: bool = True
    correction: bool = True
    default_tau: float = Field(default=0.5, ge=0, le=1)   # without a calibration ([R])
    max_rounds: int = Field(default=2, ge=0, le=5)
    committee_size: int = Field(default=3, ge=1, le=9)
    retrieve_k: int = Field(default=5, ge=1, le=50)
    concurrency: int = Field(default=2, ge=1, le=32)
    acronyms: bool = True
    vote: VoteRule = "first-read-breaks-ties"   # the committee's rule per cell (committee.tally)


class ClearReport(BaseModel):
    """What CLEAR did, for the run record and the benchmark."""

    chunks: int = 0
    failed_chunks: int = 0
    tuples_extracted: int = 0
    # of them, read by extraction calls (completion's and CLEAR's), not held by the store
    tuples_new: int = 0
    tuples_final: int = 0
    # rows whose entity the committee did not find, a namesake's rows (``namesakes``), and
    # rows naming a body their table refers to as their own entity, or a body in a table of
    # people ("table: name", misplaced.other_kind_rows: the commission as a company, an
    # institution as a laureate)
    tuples_removed: int = 0
    other_kind: list[str] = Field(default_factory=list)
    # link rows left out because their chunk says the relationship ended (ended.py): the
    # table, the row's values, its chunk and the clause
    links_ended: list[dict[str, Any]] = Field(default_factory=list)
    # rows of an entity its chunk says is not of a group the question names (denied.py):
    # the table, the row's values, its chunk and the clause
    namesakes: list[dict[str, Any]] = Field(default_factory=list)
    cells_flagged: int = 0
    # committee votes for a value the chunk does not state, over one it does: not applied
    votes_unstated: int = 0
    # rows of an entity their chunk names that no sampled read found (all read nothing)
    votes_abstained: int = 0
    tuples_flagged: int = 0
    tau_low: float | None = None
    calibration: str = ""          # its source, or "uncalibrated default"
    alias_groups: int = 0
    violations_initial: dict[str, int] = Field(default_factory=dict)
    violations_final: dict[str, int] = Field(default_factory=dict)
    corrections: dict[str, int] = Field(default_factory=dict)   # by what: committee, ...
    unresolved: int = 0            # cells NULLed or left without a decision
    rounds: int = 0
    llm_calls_extract: int = 0
    llm_calls_correct: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    constraints_skipped: list[str] = Field(default_factory=list)  # type-mismatched, DB errors
    calibration_refused: list[str] = Field(default_factory=list)  # other score kind or model
    # id key values none of their rows' chunks states ("table.column = value"), whose
    # conflicts were left
    invented_keys: list[str] = Field(default_factory=list)


__all__ = ["ClearConfig", "ClearReport"]
