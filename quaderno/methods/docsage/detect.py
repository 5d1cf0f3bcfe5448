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

Each :class:`Signal` names its table, column and the offending values and rows, so the
clarification question can cite them. Signals are ordered missing-relationship > alignment >
anomaly, the spec's priority.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from quaderno.methods.docsage.aliases import canonicalize, merge_entities
from quaderno.methods.docsage.anomalies import alignment_conflicts, fk_matches, value_anomalies
from quaderno.methods.docsage.constraints import check
from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.spans import mentions
from quaderno.methods.docsage.joins import join_fix
from quaderno.methods.docsage.normalize import is_null
from quaderno.methods.docsage.patch import SchemaPatch
from quaderno.methods.docsage.rekey import (entity_of_key, id_column, id_named, id_part,
                                            is_name_column, mislabeled_names, name_columns,
                                            name_to_add, named_after, stems)
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.terms import missing_measures
from quaderno.methods.docsage.unstated import was_unstated

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
    nothing in the schema holds (:func:`.terms.missing_measures`), carrying the column to
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


def _unstated(rows: Sequence[Row], table: Table, column: str, texts: Mapping[str, str],
              emptied: bool = False) -> tuple[list[Row], list[Row]]:
    """(the rows with a value of ``column`` and their chunk's text, those of them whose
    chunk does not state it). With ``emptied``, a value the read emptied as unstated
    (:mod:`.unstated`) counts as one not stated, and its row among both: the model wrote
    it."""
    col = table.column(column)
    gone = [r for r in rows if emptied and is_null(r.values.get(column))
            and was_unstated(r, column) and r.provenance.chunk_id in texts]
    seen = [r for r in rows
            if not is_null(r.values.get(column)) and r.provenance.chunk_id in texts]
    return seen + gone, [r for r in seen if not mentions(texts[r.provenance.chunk_id],
                                                         r.values[column], col.type)] + gone


def _references(schema: Schema, table: Table, column: str) -> bool:
    """True when ``table.column`` holds another table's key: a declared foreign key, or a
    column named after that key (``company_id``)."""
    if any(column in fk.cols for fk in table.foreign_keys):
        return True
    return any(o is not table and (key := _id_key(o)) is not None
               and named_after(column, o.name, key) for o in schema.tables)


def _id_key(table: Table) -> str | None:
    """The column ``table``'s rows are aligned and joined by, when it is one: its primary
    key, or without one its id column (:func:`.rekey.id_column`)."""
    if table.primary_key:
        return table.primary_key[0] if len(table.primary_key) == 1 else None
    return id_column(table.name, table.column_names)


def _holders(schema: Schema, table: Table, key: str) -> list[tuple[Table, str]]:
    """(table, column) for every column that holds ``table.key``: a declared foreign key to
    it, or a column of another table named after it (``companies.commissionid`` for
    ``commissions.commissionid``) and declared to refer to nothing else; the columns
    :func:`.rekey.rekey` moves with the key."""
    out = []
    for o in schema.tables:
        declared = {c for fk in o.foreign_keys if fk.ref_table == table.name
                    for c, r in zip(fk.cols, fk.ref_cols) if r == key}
        elsewhere = {c for fk in o.foreign_keys for c in fk.cols} - declared
        for c in o.columns:
            if o is table and c.name == key:
                continue
            if c.name in declared or (o is not table and c.name not in elsewhere
                                      and named_after(c.name, table.name, key)):
                out.append((o, c.name))
    return out


def _referenced(schema: Schema, table: Table, key: str) -> bool:
    """True when a column of some table holds ``table.key``."""
    return bool(_holders(schema, table, key))


def _unique_per_chunk(rows: Sequence[Row], column: str | Sequence[str]) -> bool:
    """No chunk's trial rows repeat a value of ``column`` (or of the columns together: two
    rows of one chunk with the same value are two things the column cannot tell apart)."""
    columns = [column] if isinstance(column, str) else list(column)
    seen: set[tuple[str, ...]] = set()
    for r in rows:
        v = [r.values.get(c) for c in columns]
        if any(is_null(x) for x in v):
            continue
        k = (r.provenance.chunk_id, *(str(x).casefold() for x in v))
        if k in seen:
            return False
        seen.add(k)
    return True


def _named_key(schema: Schema, table: Table, key: str) -> str | None:
    """The column a table with no trial rows is keyed by instead of its invented ``key``:
    one that says it is the entity's name (:func:`.rekey.name_columns`: ``name``,
    ``title``, ``commissionname``, ``department_title``, never ``department_head``), TEXT,
    single-valued or a name marked multi-valued (:func:`.rekey.mislabeled_names`), and no
    reference; None when the table has none."""
    names, mislabeled = name_columns(table.name), mislabeled_names(table.name)
    return next((c.name for c in table.columns
                 if c.type == "TEXT" and c.name != key and slug(c.name) in names
                 and (c.single_valued or slug(c.name) in mislabeled)
                 and not _references(schema, table, c.name)), None)


def _new_key(schema: Schema, table: Table, key: str, rows: Sequence[Row],
             texts: Mapping[str, str], share: float,
             rest: Sequence[str] = ()) -> list[str] | None:
    """What to key ``table`` by instead of its invented key: its name (a single-valued TEXT
    column called ``name`` or ``title`` or named after the entity, ``companyname``, or one of
    :func:`.rekey.mislabeled_names` a model marked multi-valued, that the
    chunks state in more than ``share`` of its rows; the most distinct values first); else,
    for a table nothing refers to, the column naming the entity its rows are about (a
    foreign key; a table linking several, ``league_city``, by all of them together, since one
    would keep a single city per league). Either must be unique within each chunk's rows. The
    key's columns, or None when there is none:
    another entity's name (``country_name`` of employees) would merge distinct rows. A table
    with no trial rows (judged by its references) has nothing to check a column against: it
    is keyed only by a column that says it is the name (``name``, ``title``,
    ``commissionname``, ``department_title``), never by ``department_head``. A table
    that names nothing at all (no name column, no reference: ``stedrurial_medal(laureate_id,
    year, nationality)``, the 1.5B model's Set1 draft) is keyed by the name of the entity
    its key numbers, a column the re-key adds (:func:`.rekey.name_to_add`,
    ``laureate_name``); each row's name is then read from its chunk like any value. ``rest``:
    the other columns of a key whose id part ``key`` is (``nationality`` of
    ``(laureate_id, nationality)``): they stay in the key, so the new column need only tell
    rows apart with them, and is never one of them."""
    own = stems(table.name)
    names, mislabeled = name_columns(table.name), mislabeled_names(table.name)
    # the rest of the key names the entity already (``(film_id, title)``): the id goes
    named_rest = [r for r in rest if slug(r) in names or slug(r) in mislabeled]
    if named_rest:
        return named_rest[:1]
    if not rows and (named := _named_key(schema, table, key)) is not None:
        return [named]
    added = name_to_add(table.name, key)
    scored = []
    for i, c in enumerate(table.columns):
        # a name marked multi-valued is mislabeled (an entity has one): the re-key fixes it
        if c.type != "TEXT" or (not c.single_valued and c.name not in mislabeled) \
                or c.name == key or c.name in rest or _references(schema, table, c.name) \
                or not _unique_per_chunk(rows, [c.name, *rest]):
            continue
        if not rows or not (c.name in ("name", "title", "full_name", "fullname", added)
                            or any(c.name.startswith(s) for s in own)):
            continue
        seen, unstated = _unstated(rows, table, c.name, texts, emptied=True)
        n = len(seen)
        if n and n - len(unstated) > share * n:
            distinct = len({str(r.values.get(c.name)) for r in rows
                            if not is_null(r.values.get(c.name))})
            scored.append((-distinct, i, c.name))
    if scored:
        return [min(scored)[-1]]
    refs = [c.name for c in table.columns if c.name != key and c.name not in rest
            and c.single_valued and _references(schema, table, c.name)]
    if refs and not _referenced(schema, table, key):
        if len(refs) > 1:  # a table linking entities (league_city): keyed by its references
            return refs if _unique_per_chunk(rows, [*refs, *rest]) else None
        return refs[:1] if _unique_per_chunk(rows, [refs[0], *rest]) else None
    # an entity table that names nothing (``laureates(laureate_id, year, nationality)``: no
    # row says whose it is) gains the entity's name as its key; not a table with a name
    # column the checks above refused, nor one of facts about another entity: a reference,
    # or a name column whose trial values tell rows apart (``awards(award_id,
    # laureate_name)``; the Set1 draft's award_name, the same medal in every row, does not)
    if refs or added in table.column_names or any(
            c.name not in rest and (c.name in names or is_name_column(c.name) and (
                not rows or any(c.name.startswith(s) for s in own)
                or len({str(r.values[c.name]).casefold() for r in rows
                        if not is_null(r.values.get(c.name))}) > 1))
            for c in table.columns):
        return None
    return [added]


def _numbered(rows: Sequence[Row], column: str) -> bool:
    """Every value of ``column`` in ``rows`` is a whole number (1, "2"): what a model
    numbering rows writes, unlike a real code such as "E1042"."""
    values = [r.values.get(column) for r in rows if not is_null(r.values.get(column))]
    return bool(values) and all(
        (isinstance(v, int) and not isinstance(v, bool)) or
        (isinstance(v, str) and v.strip().isdigit()) or
        (isinstance(v, float) and v.is_integer()) for v in values)


def _evidence(schema: Schema, table: Table, key: str, rows: Sequence[Row],
              texts: Mapping[str, str], min_rows: int) -> list[tuple[Table, str, list[Row]]]:
    """Where the values of ``table.key`` are read: its own trial rows; when fewer than
    ``min_rows`` of them give a key and their chunk (a table the trial extracted little or
    nothing of: ``commissions``, named in every company's row by a made-up
    ``commissionid``), the rows of every column that holds it and holds whole numbers too.
    Own rows that state their key are never outvoted by references that do not. Empty when
    an own row's key is not a whole number (a key by name or code)."""
    mine = [r for r in rows if r.table == table.name]
    given = [r for r in mine if not is_null(r.values.get(key))]
    if given and not _numbered(given, key):
        return []
    found = [(table, key, mine)] if given else []
    if sum(r.provenance.chunk_id in texts for r in given) >= min_rows:
        return found
    for other, column in _holders(schema, table, key):
        theirs = [r for r in rows if r.table == other.name]
        if _numbered(theirs, column):
            found.append((other, column, theirs))
    return found


def invented_keys(schema: Schema, rows: Sequence[Row], texts: Mapping[str, str], *,
                  min_rows: int = 2, share: float = 0.5) -> list[Signal]:
    """Tables keyed by an invented id: a single-column primary key named as an id (``id``,
    ``..._id``, ``companyid`` of ``companies``; without a primary key, the table's own id
    column, :func:`_id_key`; or the one id part of a key of several,
    :func:`.rekey.id_part`, which the re-key replaces keeping the rest), holding whole
    numbers, that is no reference to another table, and whose values the row's chunk
    (``texts``: chunk id -> the text extraction was shown) does not state in more than
    ``share`` of at least ``min_rows`` trial rows; a table with fewer rows of its own is
    read in the columns that refer to it too, from at least ``min_rows`` chunks
    (:func:`_evidence`). Keys by name, code or date are never taken for invented ones. The
    signal's fix re-keys the table (:func:`_new_key`: by a column it has, or by its
    entity's name, added); a table with no column to key it by and none to add (a name
    column refused, a fact table's reference that cannot tell its rows apart) gets a
    signal without a fix, asked like any other."""
    signals: list[tuple[bool, Signal]] = []
    for t in schema.tables:
        # a key of several columns with one id part (``(laureate_id, nationality)``) keeps
        # its other parts when the id goes
        key = _id_key(t) or id_part(t.name, t.primary_key)
        if key is None or not id_named(key, t.name):
            continue
        rest = [k for k in t.primary_key if k != key]
        # a key that refers to another table's is as invented as that one: re-keying the
        # other moves it
        if _references(schema, t, key):
            continue
        n, unstated, where, chunks = 0, [], [], set()
        for holder, column, held in _evidence(schema, t, key, rows, texts, min_rows):
            seen, missed = _unstated(held, holder, column, texts)
            n += len(seen)
            unstated += [(r, column) for r in missed]
            chunks |= {r.provenance.chunk_id for r in seen}
            if seen:
                where.append(f"{holder.name}.{column}")
        own = where == [f"{t.name}.{key}"]
        # one chunk's company row and its revenue row are one statement, not two
        if n < min_rows or len(unstated) <= share * n or (not own and len(chunks) < min_rows):
            continue
        # by their text: a model may give any JSON value, a list included
        values = list({str(r.values[c]): r.values[c] for r, c in unstated}.values())[:6]
        told = "" if own else f" (read in {', '.join(where)})"
        detail = (f"no chunk states the key {t.name}.{key} in {len(unstated)} of {n} trial "
                  f"rows{told}: the key is invented and cannot align rows")
        mine = [r for r in rows if r.table == t.name]
        cols = _new_key(schema, t, key, mine, texts, share, rest)
        # the new key: the columns found, then the rest of the old key
        kept = [*cols, *(r for r in rest if r not in cols)] if cols else []
        new_column = bool(cols) and cols[0] not in t.column_names
        described = ""
        if new_column:
            entity = entity_of_key(t.name, key)
            described = f"the name of the {entity} the row is about, as the documents write it"
            detail += f"; no column names the {entity}: key {t.name} by a new column " \
                      f"{cols[0]}, its name"
        elif cols:
            by = kept[0] if len(kept) == 1 else f"({', '.join(kept)})"
            detail += f"; key {t.name} by {by}, which the chunks state" if mine else \
                f"; key {t.name} by {by}"
        signal = Signal(kind="alignment_conflict", table=t.name, column=key, detail=detail,
                        values=values, fix=SchemaPatch(op="rekey", table=t.name, column=cols[0],
                                                       key_with=kept[1:], description=described)
                        if cols else None,
                        chunk_ids=sorted({r.provenance.chunk_id for r, _ in unstated})[:5])
        # a table of facts is re-keyed by its reference before that reference is renamed
        # after the entity's new key (revenue by companyid, then companies by companyname)
        first = bool(cols) and _references(schema, t, cols[0])
        signals.append((not first, signal))
    return [s for _, s in sorted(signals, key=lambda x: x[0])]


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
        key = _id_key(t)
        if key is not None and id_named(key, name) and not _references(schema, t, key) and (
                named := _named_key(schema, t, key)) is not None:
            fix = SchemaPatch(op="rekey", table=name, column=named)
            detail += f"; no text states its key {key}: key {name} by {named}"
        # the key's column, as an invented key's signal names it: what refers to it moves
        # with the re-key, and detect_all does not ask about those references too
        out.append(Signal(kind="missing_relationship", table=name,
                          column=key if fix is not None else "", detail=detail, fix=fix,
                          chunk_ids=sorted(texts)[:5]))
    return out


def rank(signals: Sequence[Signal], limit: int) -> list[Signal]:
    """Distinct signals: those carrying a fix first (they cost no question), then at most
    ``limit`` others by priority."""
    unique = list({s.key(): s for s in signals}.values())
    fixed = [s for s in unique if s.fix is not None]
    asked = sorted((s for s in unique if s.fix is None), key=lambda s: PRIORITY[s.kind])
    return fixed + asked[:limit]


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
               for o, c in [*_holders(schema, t, s.column), (t, s.column)]}
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
