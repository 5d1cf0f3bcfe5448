"""ASK's uncertainty signals as values: what :mod:`.detect` finds and ASK asks about or fixes.

Each :class:`Signal` names its table, column and the offending values and rows, so the
clarification question can cite them; one that carries a :class:`.patch.SchemaPatch` costs
no question. :func:`rank` orders them missing-relationship > alignment > anomaly, the spec's
priority.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from quaderno.methods.docsage.patch import SchemaPatch

SignalKind = Literal["missing_relationship", "alignment_conflict", "value_anomaly"]
PRIORITY: dict[str, int] = {"missing_relationship": 0, "alignment_conflict": 1,
                            "value_anomaly": 2}


class Signal(BaseModel):
    kind: SignalKind
    table: str = ""
    column: str = ""
    detail: str
    values: list[Any] = Field(default_factory=list)
    chunk_ids: list[str] = Field(default_factory=list)
    # a repair code can make without asking the documents (an invented key)
    fix: SchemaPatch | None = None

    def key(self) -> tuple[str, str, str, str]:
        return (self.kind, self.table, self.column, self.detail)


def rank(signals: Sequence[Signal], limit: int) -> list[Signal]:
    """Distinct signals: those carrying a fix first (they cost no question), then at most
    ``limit`` others by priority."""
    unique = list({s.key(): s for s in signals}.values())
    fixed = [s for s in unique if s.fix is not None]
    asked = sorted((s for s in unique if s.fix is None), key=lambda s: PRIORITY[s.kind])
    return fixed + asked[:limit]
