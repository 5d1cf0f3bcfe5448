"""ASK's three uncertainty signals, found by code on trial rows (spec §2, step 2).

The paper names them; it does not say how to find them. Here none asks the LLM whether it
is uncertain:

* **missing relationships**: the schema graph (tables as nodes, foreign keys as edges) must
  hold every attribute the question requires, and the tables it needs must be connected; a
  required column that is NULL in more than half of the trial rows is missing too, and so is
  a needed table the trial filled with no row from any probe chunk (:func:`empty_tables`;
  keyed by an id with a name column, it is re-keyed by the name as below). Tables
  left apart carry a repair (:mod:`.joins`): declare the foreign key a column's name already
  says, else add a column naming the other table's entity. What the question measures
  ("the highest annual revenue") must be held by some column, description or unit, else a
  column for it is added (:mod:`.terms`);
* **entity-alignment conflicts**: one entity with two values of a single-valued column across
  documents, a foreign-key value that matches no parent row or several, or an invented key:
  a primary key whose values no trial row's chunk states (a surrogate ``companyid`` the
  model numbered 1, 2, ...; a table the trial found too few rows of is judged by the rows
  that refer to it), which cannot align anything. This one carries its own
  :class:`SchemaPatch` where it can: key the table by a name the chunks do state (or by the
  entity a table of facts is about); ASK applies it without a clarification question;
* **value anomalies**: a typed column that fails to parse in more than 20% of trial rows, a
  robust z-score above 3.5, an implausible year or a negative count, or a violated constraint.

Each :class:`.signals.Signal` names its table, column and the offending values and rows, so
the clarification question can cite them (:func:`.signals.rank` orders them). An invented
key is found in :mod:`.invented`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quaderno.methods.docsage.aliases import canonicalize, merge_entities
from quaderno.methods.docsage.anomalies import alignment_conflicts, fk_matches, value_anomalies
from quaderno.methods.docsage.constraints import check
from quaderno.methods.docsage.invented import (holders, id_key, invented_keys, is_reference,
                                               named_key)
from quaderno.methods.docsage.joins import join_fix
from quaderno.methods.docsage.normalize import is_null
from quaderno.methods.docsage.patch import SchemaPatch
from quaderno.methods.docsage.rekey import id_named
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.signals import Signal
from quaderno.methods.docsage.missing import missing_measures


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
            # the needed tables of the component first, then the rest (sorted: stable)
            near = [n for n in needed if n in home] + sorted(home - set(needed))
            signals.append(Signal(kind="missing_relationship", table=needed[0],
                                  detail=f"no foreign-key path joins {needed[0]} with "
                                         f"{', '.join(apart)}", values=apart,
                                  fix=join_fix(schema, near, apart, rows)))
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


def unmeasured(schema: Schema, question: str, rows: Sequence[Row] = ()) -> list[Signal]:
    """A missing relationship per phrase ``question`` measures, filters by or asks for that
    nothing in the schema holds (:func:`.missing.missing_measures`), carrying the column to
    add when the question names a table."""
    out = []
    for m in missing_measures(schema, question, rows):
        fix = None if m.table is None else SchemaPatch(
            op="add_column", table=m.table, column=m.column, type=m.type,
            description=f"the {m.measure.phrase} the question "
                        f"{'asks about' if m.role == 'measures' else m.role}")
        out.append(Signal(kind="missing_relationship", table=m.table or "",
                          column=m.column if m.table else "",
                          detail=f"the question {m.role} {m.measure.phrase!r}, which no "
                                 "table, column or description of the schema holds",
                          values=[m.measure.phrase], fix=fix))
    return out


def empty_tables(schema: Schema, rows: Sequence[Row],
                 texts: Mapping[str, str]) -> list[Signal]:
    """A missing relationship per table the question needs (its entity types, join path and
    attributes; every table when it names none) that the trial extraction filled with no
    row from any of the probe chunks (``texts``): the schema does not fit how the documents
    state that entity (another name, columns no text has, a key no text states). On 2Wiki
    the 1.5B model keyed ``movies`` by an ``id`` and the country by a ``country_id``, and
    extracted nothing from two film articles. A table keyed by an id that refers to nothing
    gets the fix an invented key gets when it has a column that is the entity's name (with
    no row, no text states the id either); else the signal is asked about."""
    if not texts:
        return []
    req = schema.requirements
    needed = [*req.entity_types, *req.join_path, *(a.partition(".")[0] for a in req.attributes)]
    needed = [n for n in dict.fromkeys(needed) if schema.table(n) is not None] or \
        [t.name for t in schema.tables]
    filled = {r.table for r in rows}
    out = []
    for name in needed:
        t = schema.table(name)
        if t is None or name in filled:
            continue
        detail = f"the trial extraction found no {name} row in {len(texts)} probe chunk(s)"
        fix = None
        key = id_key(t)
        if key is not None and id_named(key, name) and not is_reference(schema, t, key) and (
                named := named_key(schema, t, key)) is not None:
            fix = SchemaPatch(op="rekey", table=name, column=named)
            detail += f"; no text states its key {key}: key {name} by {named}"
        # the key's column, as an invented key's signal names it: what refers to it moves
        # with the re-key, and detect_all does not ask about those references too
        out.append(Signal(kind="missing_relationship", table=name,
                          column=key if fix is not None else "", detail=detail, fix=fix,
                          chunk_ids=sorted(texts)[:5]))
    return out


def detect_all(schema: Schema, rows: Sequence[Row],
               texts: Mapping[str, str] | None = None, question: str = "") -> list[Signal]:
    """The three signals on trial rows: missing relationships (here; given the
    ``question``, what it measures too; given the probe ``texts``, needed tables the trial
    filled with nothing), entity-alignment conflicts, foreign-key matches and
    (given the chunks' ``texts``) invented keys, and value anomalies and violated
    constraints (:mod:`.anomalies`, :mod:`.constraints`)."""
    invented = invented_keys(schema, rows, texts) if texts else []
    rekeyed_already = {s.table for s in invented if s.fix is not None}
    invented += [s if s.table not in rekeyed_already else s.model_copy(
        update={"fix": None, "column": ""}) for s in empty_tables(schema, rows, texts or {})]
    # one entity stated in several chunks is one row, as CLEAR will make it: without the
    # merge every such entity would look like a duplicate key
    rows, _ = canonicalize(schema, rows)
    rows = merge_entities(schema, rows)
    signals = unmeasured(schema, question, rows) + missing_relationships(schema, rows)
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
    # rows aligned by an invented key disagree on everything, and references to it match
    # nothing: those conflicts are its consequence, not questions for the documents (the
    # references move with the key; a table keyed by one is aligned by it too)
    fixed = [s for s in invented if s.fix is not None]
    holding = {(o.name, c) for t in schema.tables for s in fixed if s.table == t.name
               for o, c in [*holders(schema, t, s.column), (t, s.column)]}
    # a table without a primary key aligns by its name, not the id: its other conflicts
    # stand
    rekeyed = {o.name for o in schema.tables if len(o.primary_key) == 1 and (
        any(s.table == o.name for s in fixed) or (o.name, o.primary_key[0]) in holding)}
    # a re-key rewrites the references a join repair would name: the join is judged again
    # on the re-keyed schema, in the next round (a measure's new column refers to nothing)
    if fixed:
        signals = [s.model_copy(update={"fix": None})
                   if s.fix is not None and s.fix.references_table else s for s in signals]
    return invented + [s for s in signals if not (s.kind == "alignment_conflict" and (
        s.table in rekeyed or (s.table, s.column) in holding))]
