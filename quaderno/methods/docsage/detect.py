"""ASK's three uncertainty signals, found by code on trial rows (spec §2, step 2).

The paper names them; it does not say how to find them. Here none asks the LLM whether it
is uncertain:

* **missing relationships**: the schema graph (tables as nodes, foreign keys as edges) must
  hold every attribute the question requires, and the tables it needs must be connected; a
  required column that is NULL in more than half of the trial rows is missing too;
* **entity-alignment conflicts**: one entity with two values of a single-valued column across
  documents, or a foreign-key value that matches no parent row or several;
* **value anomalies**: a typed column that fails to parse in more than 20% of trial rows, a
  robust z-score above 3.5, an implausible year or a negative count, or a violated constraint.

Each :class:`Signal` names its table, column and the offending values and rows, so the
clarification question can cite them. Signals are ordered missing-relationship > alignment >
anomaly, the spec's priority.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from quaderno.methods.docsage.aliases import canonicalize, merge_entities
from quaderno.methods.docsage.anomalies import alignment_conflicts, fk_matches, value_anomalies
from quaderno.methods.docsage.constraints import check
from quaderno.methods.docsage.normalize import is_null
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema

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

    def key(self) -> tuple[str, str, str, str]:
        return (self.kind, self.table, self.column, self.detail)


def _components(schema: Schema) -> list[set[str]]:
    """Connected components of the schema graph (tables, foreign-key edges)."""
    adj: dict[str, set[str]] = {t.name: set() for t in schema.tables}
    for t in schema.tables:
        for fk in t.foreign_keys:
            adj[t.name].add(fk.ref_table)
            adj.setdefault(fk.ref_table, set()).add(t.name)
    seen: set[str] = set()
    out = []
    for start in adj:
        if start in seen:
            continue
        comp, stack = set(), [start]
        while stack:
            node = stack.pop()
            if node in comp:
                continue
            comp.add(node)
            stack.extend(adj[node] - comp)
        seen |= comp
        out.append(comp)
    return out


def missing_relationships(schema: Schema, rows: Sequence[Row] = (), *,
                          null_rate: float = 0.5) -> list[Signal]:
    """Required attributes the schema lacks, required tables in different components, and
    required columns mostly NULL in ``rows``."""
    req = schema.requirements
    signals: list[Signal] = []
    needed: list[str] = []
    for attr in req.attributes:
        table, _, col = attr.partition(".")
        t = schema.table(table)
        if t is None or col not in t.column_names:
            signals.append(Signal(kind="missing_relationship", table=table, column=col,
                                  detail=f"the question needs {attr}, which the schema lacks"))
        else:
            needed.append(table)
    needed += [n for n in req.join_path if schema.table(n) is not None]
    needed = list(dict.fromkeys(needed))
    comps = _components(schema)
    if len(needed) > 1:
        home = next(c for c in comps if needed[0] in c)
        apart = [n for n in needed if n not in home]
        if apart:
            signals.append(Signal(kind="missing_relationship", table=needed[0],
                                  detail=f"no foreign-key path joins {needed[0]} with "
                                         f"{', '.join(apart)}", values=apart))
    for attr in req.attributes:
        table, _, col = attr.partition(".")
        mine = [r for r in rows if r.table == table]
        if not mine or schema.table(table) is None:
            continue
        nulls = [r for r in mine if is_null(r.values.get(col))]
        if len(nulls) / len(mine) > null_rate:
            signals.append(Signal(kind="missing_relationship", table=table, column=col,
                                  detail=f"{attr} is missing in {len(nulls)} of {len(mine)} "
                                         "trial rows",
                                  chunk_ids=sorted({r.provenance.chunk_id for r in nulls})[:5]))
    return signals


def rank(signals: Sequence[Signal], limit: int) -> list[Signal]:
    """Distinct signals, by priority, at most ``limit``."""
    unique = list({s.key(): s for s in signals}.values())
    return sorted(unique, key=lambda s: PRIORITY[s.kind])[:limit]


def detect_all(schema: Schema, rows: Sequence[Row]) -> list[Signal]:
    """The three signals on trial rows: missing relationships (here), entity-alignment
    conflicts and foreign-key matches, and value anomalies and violated constraints
    (:mod:`.anomalies`, :mod:`.constraints`)."""
    # one entity stated in several chunks is one row, as CLEAR will make it: without the
    # merge every such entity would look like a duplicate key
    rows, _ = canonicalize(schema, rows)
    rows = merge_entities(schema, rows)
    signals = missing_relationships(schema, rows)
    for c in alignment_conflicts(schema, rows):
        signals.append(Signal(kind="alignment_conflict", table=c.table, column=c.column,
                              detail=f"{' '.join(c.entity)} has {len(c.values)} different "
                                     f"values of {c.column}", values=c.values,
                              chunk_ids=c.chunks[:5]))
    for m in fk_matches(schema, rows):
        signals.append(Signal(kind="alignment_conflict", table=m.table, column=m.column,
                              detail=f"{m.column} {m.value!r} matches "
                                     + ("no" if m.kind == "missing" else "several")
                                     + f" {m.ref_table} rows", values=[m.value, *m.parents],
                              chunk_ids=m.chunks[:5]))
    for a in value_anomalies(schema, rows):
        signals.append(Signal(kind="value_anomaly", table=a.table, column=a.column,
                              detail=a.detail or a.kind.replace("_", " "), values=a.values[:6],
                              chunk_ids=a.chunks[:5]))
    # key → column dependencies and duplicate keys left after the merge are what
    # alignment_conflicts reports (one entity, two values); not twice
    declared = [c for c in schema.all_constraints() if c.kind != "unique"]
    for v in check(schema, rows, implied=False, constraints=declared).violations:
        signals.append(Signal(kind="value_anomaly", table=v.table,
                              column=",".join(v.columns),
                              detail=v.message or f"violates the {v.kind} constraint",
                              values=list(v.values)[:6]))
    return signals
