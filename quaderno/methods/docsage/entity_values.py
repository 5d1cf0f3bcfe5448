"""An entity's one value of a column, written on every row the entity has.

A table with multi-valued columns holds one row per value: a company with two sectors is two
rows of ``companies``. Chunks state an entity's attributes apart, and the merge keeps rows
that contradict each other apart (:func:`.aliases.merge_entities`). A multi-valued column
is such a contradiction. So at f8d275e, Riandgiax Systems was two rows:

- (energy, the Drournlia Markets Commission, no offices);
- (its slogan read as a sector, no commission, 269 offices).

"The average offices of the commission's energy companies" filtered one row and averaged the
other, and missed Riandgiax.

A single-valued column holds one value per entity: key → column is a dependency CLEAR checks.
So that value belongs on each of the entity's rows. When an entity's rows hold exactly one
value of such a column, its rows without a value take it. Each filled cell gets an
``entity-value`` correction that names the chunk the value came from, so provenance still
leads to the text that states it.

Nothing is copied:
- from two different values: that is a conflict for CLEAR to settle, or to leave;
- into a cell a text says has ended (ended.py);
- across namesakes, rows that name different entities they belong to
  (:func:`.namesakes.entity_groups`), nor from or to a row of theirs that names none;
- in a column that describes the row's value rather than the entity: one saying when (a
  prize's year) or named after a multi-valued column (``prize_money`` beside ``prize``).

Keys with a missing part are not an entity, and are left alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.ended import ended_columns
from quaderno.methods.docsage.misplaced import name_references
from quaderno.methods.docsage.namesakes import belonging, entity_groups
from quaderno.methods.docsage.normalize import (cell_form, entity_key, key_columns, multi_valued,
                                                normalize_entity)
from quaderno.methods.docsage.own_key import says_when
from quaderno.methods.docsage.rows import Row, take_cell
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.terms import GENERIC


def _filled(row: Row, column: str, source: Row) -> Row:
    """``row`` with ``source``'s value of ``column``, its confidence and where it came from."""
    out = row.model_copy(deep=True)
    value = source.values[column]
    out.values[column] = value
    prov = out.provenance
    prov.corrections.append(take_cell(prov.confidence, prov.confidence_kind, source.provenance,
                                      column, value, "entity-value"))
    return out


def _entity_columns(table: Table) -> list[str]:
    """The single-valued columns an entity has one value of whatever its other rows hold:
    not keys, not a column saying when a row holds (a prize's year: :func:`.own_key.
    says_when`), not one named after a multi-valued column (``prize_money`` beside
    ``prize``; generic words like ``name`` aside): those describe the row's value, not the
    entity."""
    keys = key_columns(table)
    multi = {w for c in multi_valued(table) for w in slug(c).split("_")} - GENERIC
    return [c.name for c in table.columns if c.single_valued and c.name not in keys
            and not says_when(c) and not set(slug(c.name).split("_")) & multi]


def _share(table: Table, rows: list[Row], members: Sequence[int],
           aliases: Mapping[str, str] | None) -> int:
    """Fill ``rows[members]`` (one entity's) in place; the number of cells filled."""
    filled = 0
    for column in _entity_columns(table):
        if any(column in ended_columns(rows[i]) for i in members):
            continue
        forms = {i: cell_form(table, column, rows[i].values.get(column), aliases)
                 for i in members}
        held = [i for i in members if forms[i] is not None]
        if len({forms[i] for i in held}) != 1:
            continue
        source = rows[held[0]]
        for i in members:
            if forms[i] is None:
                rows[i] = _filled(rows[i], column, source)
                filled += 1
    return filled


def share_entity_values(schema: Schema, rows: Sequence[Row],
                        aliases: Mapping[str, str] | None = None) -> tuple[list[Row], int]:
    """``rows`` with each entity's one value of a single-valued column on all its rows of a
    table with multi-valued columns (module docstring), and the number of cells filled.
    Row order is kept."""
    out = list(rows)
    entities: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    for i, r in enumerate(out):
        table = schema.table(r.table)
        if table is None or not table.primary_key or not multi_valued(table):
            continue
        key = entity_key(table, r.values, aliases)
        if all(key):
            entities.setdefault((r.table, key), []).append(i)
    filled = 0
    references = name_references(schema)
    for (name, _), members in entities.items():
        if len(members) < 2:
            continue
        table = schema.table(name)
        if table is None:
            continue
        mine = [out[i] for i in members]
        refs = belonging(table, key_columns(table), references)
        for named, group in entity_groups(schema, table, key_columns(table), mine, aliases,
                                          references):
            # among namesakes, a row naming none is only guessed to be the entity most
            # rows name: it neither gives nor takes a value
            if named:
                group = [j for j in group
                         if any(normalize_entity(mine[j].values.get(c), aliases) for c in refs)]
            filled += _share(table, out, [members[j] for j in group], aliases)
    return out, filled


__all__ = ["share_entity_values"]
