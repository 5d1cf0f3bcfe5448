"""Tables merged into one in a draft, with what named them (the end of a draft repair).

Once :mod:`.siblings` has found tables that hold one kind of entity and chosen the one that
takes in the others, :func:`merge_tables` merges them. The merged table gains the other
tables' columns it lacks (the columns a requirement or constraint names first; never their
ids or columns named after them), up to the draft's column cap, and loses its own columns
named after a table merged into it. Foreign keys, constraints, required attributes, entity
types and the join path that named a merged table name the merged table; a foreign key to a
merged table's key column the merged table lacks points at the merged table's key. A
description naming a merged table is cleared (it would tell extraction the table is about one
company). A reference or constraint the renaming leaves twice is kept once.
"""

from __future__ import annotations

from quaderno.methods.docsage.draft import (MAX_COLUMNS, MAX_REFERENCES, DraftForeignKey,
                                            DraftTable, SchemaDraft, rename_table, slug)
from quaderno.methods.docsage.rekey import stems


def bare_name(name: str) -> str:
    """A table's or column's name as a slug without separators (``gouqinenergy``)."""
    return slug(name).replace("_", "")


def without(tables: list[DraftTable], some: list[DraftTable]) -> list[DraftTable]:
    """``tables`` but the very objects in ``some``."""
    return [t for t in tables if all(t is not o for o in some)]


def _about(column: str, table: str) -> bool:
    """``column`` is ``table``'s own id or named after it (``id``, ``grounlenkreenergy_id``,
    ``gouqinenergyname``); a bare ``name`` or ``title`` is not."""
    bare = bare_name(column)
    return bare == "id" or bare in {bare_name(s) + w for s in stems(table)
                                    for w in ("id", "name", "title")}


def _named(draft: SchemaDraft, table: DraftTable) -> set[str]:
    """The columns of ``table`` a requirement or constraint names (slugs)."""
    own = slug(table.name)
    return {slug(c) for a in draft.required_attributes for t, _, c in [a.partition(".")]
            if slug(t) == own} | {slug(c) for k in draft.constraints if slug(k.table) == own
                                  for c in k.columns}


def merge_tables(draft: SchemaDraft, into: DraftTable, gone: list[DraftTable],
                 merged: list[str]) -> list[str]:
    """``gone`` merged into ``into``; ``merged``: the names all of them had before. Returns
    the columns left out at the cap."""
    # the columns named after a table of the group name nothing once it is one table
    keys = {slug(k) for k in into.primary_key}
    drop = {slug(c.name) for c in into.columns if slug(c.name) not in keys | {"id"}
            and any(_about(c.name, n) for n in merged if slug(n) != slug(into.name))}
    into.columns = [c for c in into.columns if slug(c.name) not in drop]
    into.foreign_keys = [fk for fk in into.foreign_keys if slug(fk.column) not in drop]
    have, cut = {slug(c.name) for c in into.columns}, []
    for t in gone:
        needed = _named(draft, t)
        for c in sorted(t.columns, key=lambda c: slug(c.name) not in needed):
            s = slug(c.name)
            if s in have or s in drop or any(_about(s, n) for n in [*merged, into.name]):
                continue
            if len(into.columns) >= MAX_COLUMNS:
                cut.append(c.name)
                continue
            into.columns.append(c)
            have.add(s)
        into.foreign_keys += [fk for fk in t.foreign_keys if slug(fk.column) in have]
    draft.tables = without(draft.tables, gone)
    gone_names = {slug(t.name) for t in gone}
    # what named a column of a merged table that the merged table lacks: a reference to
    # its key points at the merged table's key, a requirement of it is dropped
    pk = into.primary_key[0] if len(into.primary_key) == 1 else ""
    for t in draft.tables:
        for fk in t.foreign_keys:
            if slug(fk.references_table) in gone_names and \
                    slug(fk.references_column) not in have and pk:
                fk.references_column = pk
    # a requirement of a merged table's id or own name is dropped, the others follow it
    # (one no sibling had stays the missing relationship ASK asks about), and so is one of
    # a column the merged table dropped
    draft.required_attributes = [
        a for a in draft.required_attributes for tb, _, c in [a.partition(".")]
        if not (slug(tb) in gone_names and any(_about(c, n) for n in merged))
        and not (slug(tb) == slug(into.name) and slug(c) in drop)]
    for t in gone:
        rename_table(draft, t.name, into.name)
    _clear_descriptions(into, merged)
    for t in draft.tables:  # one reference once; none from a column to itself
        seen: set[tuple[str, str, str]] = set()
        kept: list[DraftForeignKey] = []
        for fk in t.foreign_keys:
            key = (slug(fk.column), slug(fk.references_table), slug(fk.references_column))
            if key in seen or (t is into and key[1] == slug(into.name) and key[0] == key[2]):
                continue
            seen.add(key)
            kept.append(fk)
        t.foreign_keys = kept[:MAX_REFERENCES]
    seen_c: set[tuple[str, str, tuple[str, ...]]] = set()
    constraints = []
    for k in draft.constraints:
        key = (k.kind, slug(k.table), tuple(slug(x) for x in k.columns))
        if key not in seen_c:
            seen_c.add(key)
            constraints.append(k)
    draft.constraints = constraints
    draft.required_attributes = list(dict.fromkeys(draft.required_attributes))
    return cut


def _clear_descriptions(into: DraftTable, merged: list[str]) -> None:
    """Descriptions naming a merged table ("Gouqin Energy's revenue") are cleared."""
    names = [b for n in merged if slug(n) != slug(into.name) and len(b := bare_name(n)) >= 5]

    def names_one(text: str) -> bool:
        return any(n in bare_name(text) for n in names)
    if names_one(into.description):
        into.description = ""
    for c in into.columns:
        if names_one(c.description):
            c.description = ""


__all__ = ["bare_name", "merge_tables", "without"]
