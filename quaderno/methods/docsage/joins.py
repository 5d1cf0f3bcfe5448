"""Repairing a join path the question needs (ASK's missing-relationship signal, by code).

"Which city of the League of X has the lowest population?" needs ``city`` joined with
``league``; a draft without a foreign key between them leaves the SQL nothing to join on (the
1.5B model then filtered cities on ``country = 'League of X'``), and asking the documents
"what joins city with league?" got no answer in our runs. Two repairs need no question:

* a column already names the other table's key (``revenue.companyname`` beside the key
  ``companies.companyname``; ``cities.league_id`` for ``leagues.league_id``) with no foreign key
  declared: declare it;
* no column does: give the table with more trial rows (the many side: cities, not leagues) a
  column naming the other's entity (``league_name``, a foreign key to ``league.name``), which
  the next trial extraction fills from text like "X is a city of the League of Y".

Only a single-column key can be referred to: the declared one, or, for a table with none yet,
the name column it will be keyed by when ASK's rounds end (:func:`.own_key.own_key_column`:
``laureates.name``; the 1.5B model's Set1 ``stedrurial_medal(award_name, year)`` stayed
unjoined to ``laureates`` until then, ``resample-docsage-set1``). Without one there is no
repair, and the signal is asked as before. Known limit: a later round can give that table a
column that keeps it keyless (a year: several rows per name), and the reference then points
at a name that is not unique; the SQL joins it as written.
"""

from __future__ import annotations

from collections.abc import Sequence

from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.own_key import own_key_column
from quaderno.methods.docsage.patch import SchemaPatch
from quaderno.methods.docsage.rekey import entity_reference, named_after, singular
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import ForeignKey, Schema, Table


def _key(table: Table, schema: Schema) -> str | None:
    """The one column ``table`` is keyed by: its declared primary key, or, for a table with
    none yet, the name column it will be keyed by when ASK's rounds end (a table the
    1.5B model's draft left keyless, own_key.py)."""
    if table.primary_key:
        return table.primary_key[0] if len(table.primary_key) == 1 else None
    return own_key_column(table, schema)


def _unreferenced_name(holder: Table, target: Table, schema: Schema) -> SchemaPatch | None:
    """A foreign key to declare: a column of ``holder`` named after ``target``'s key, of its
    type, that is no foreign key yet."""
    key = _key(target, schema)
    if key is None or holder is target:
        return None
    declared = {c for fk in holder.foreign_keys for c in fk.cols}
    want = target.column(key).type
    for c in holder.columns:
        if c.name not in declared and c.type == want and named_after(c.name, target.name, key):
            return SchemaPatch(op="add_foreign_key", table=holder.name, column=c.name,
                               references_table=target.name, references_column=key)
    return None


def named_references(schema: Schema) -> list[SchemaPatch]:
    """Every foreign key the column names imply and the schema does not declare
    (``companies.commissionid`` beside the key ``commissions.commissionid``), at most one per
    column, and none back to a table that refers to the holder already (two tables keyed by
    the same ``companyid`` would point at each other). ASK repairs one such key per
    missing-relationship signal and round; the 1.5B model's Set1 schema ended its rounds
    with ``stedrurial_medal_award_laureate.stedrurial_medal_laureate_name`` undeclared, so
    the SQL prompt showed no join and the gate could add none."""
    linked = {(t.name, fk.ref_table) for t in schema.tables for fk in t.foreign_keys}
    out: list[SchemaPatch] = []
    for holder in schema.tables:
        taken: set[str] = set()
        for target in schema.tables:
            fix = _unreferenced_name(holder, target, schema)
            if fix is None or fix.column in taken or (target.name, holder.name) in linked:
                continue
            taken.add(fix.column)
            linked.add((holder.name, target.name))
            out.append(fix)
    return out


def declare(schema: Schema, patches: Sequence[SchemaPatch], reason: str) -> Schema:
    """``schema`` with the foreign keys of ``add_foreign_key`` patches added as they are: a
    new version, the patches in its history. Not through :func:`.patch.apply_patches`, whose
    draft form caps tables and columns at the model's limits and would cut what ASK's
    rounds let grow past them. Raises ValueError when the result does not validate."""
    keys: dict[str, list[ForeignKey]] = {}
    for p in patches:
        keys.setdefault(p.table, []).append(ForeignKey(
            cols=[p.column], ref_table=p.references_table, ref_cols=[p.references_column]))
    body = schema.model_dump()
    for t in body["tables"]:
        t["foreign_keys"] += [k.model_dump() for k in keys.get(t["name"], [])]
    body["version"] = schema.version + 1
    body["history"] = [*schema.history,
                       *({"version": schema.version + 1, "reason": reason,
                          **p.model_dump(exclude_none=True)} for p in patches)]
    return Schema.model_validate(body)


def reference_name(holder: Table, target: Table, key: str) -> str:
    """The name of a new column of ``holder`` naming ``target``'s entity by its ``key``:
    ``league_name`` for ``league.name``, ``leaguename`` as it is, not taken in ``holder``."""
    name = slug(entity_reference(target.name, key))
    taken = {slug(c.name) for c in holder.columns}
    base, n = name, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def join_fix(schema: Schema, home: Sequence[str], apart: Sequence[str],
             rows: Sequence[Row] = ()) -> SchemaPatch | None:
    """One patch that joins a table of ``apart`` to one of ``home`` (module docstring); None
    when neither repair applies."""
    tables = {t.name: t for t in schema.tables}
    pairs = [(tables[a], tables[b]) for a in home for b in apart
             if a in tables and b in tables]
    for a, b in pairs:                       # 1. a column names the other's key already
        fix = _unreferenced_name(a, b, schema) or _unreferenced_name(b, a, schema)
        if fix is not None:
            return fix
    counts = {t: sum(r.table == t for r in rows) for t in tables}
    for a, b in pairs:                       # 2. the many side names the other's entity
        many, one = (b, a) if counts[b.name] > counts[a.name] else (a, b)
        for holder, target in ((many, one), (one, many)):
            key = _key(target, schema)
            if key is None:
                continue
            return SchemaPatch(
                op="add_column", table=holder.name, column=reference_name(holder, target, key),
                type=target.column(key).type,
                description=f"the {singular(slug(target.name))} this "
                            f"{singular(slug(holder.name))} belongs to "
                            f"({target.name}.{key})",
                references_table=target.name, references_column=key)
    return None


__all__ = ["declare", "join_fix", "named_references", "reference_name"]
