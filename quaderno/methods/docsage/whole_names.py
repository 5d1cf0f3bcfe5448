"""A person's name split into first and last name, made one column again (a draft repair).

The 1.5B measuring model drew ``laureates(laureate_id, first_name, last_name, ...)`` for
a question about laureates: the documents name each laureate in one piece ("Gryrnstu
Pougryrn"), the id was invented, and without a column naming the entity ASK had nothing to
re-key the table by (:func:`.invented._new_key` looks for ``name`` or ``laureate_name``), so
the table kept its invented key and the question's join matched nothing. :func:`whole_names`
turns such a pair into one ``name`` column, in the draft the model wrote, before it becomes
a :class:`~quaderno.methods.docsage.schema.Schema`: the primary key, foreign keys (this
table's and those pointing at it), constraints and required attributes follow. A table that
already has a name column (``name``, ``full_name``, or one named after its entity,
``laureate_name``) is left as it is, and so is a pair of another type or marked
multi-valued.
"""

from __future__ import annotations

from quaderno.methods.docsage.draft import DraftColumn, DraftTable, SchemaDraft, slug
from quaderno.methods.docsage.rekey import name_columns

_FIRST = {"first_name", "firstname", "given_name", "givenname", "forename", "first"}
_LAST = {"last_name", "lastname", "surname", "family_name", "familyname", "last"}


def whole_names(draft: SchemaDraft) -> tuple[SchemaDraft, list[str]]:
    """``draft`` with each table's first- and last-name columns merged into ``name``, and
    a note per table changed."""
    draft = draft.model_copy(deep=True)
    notes: list[str] = []
    for table in draft.tables:
        cols = {slug(c.name): c for c in table.columns}
        first = [c for s, c in cols.items() if s in _FIRST and _plain(c)]
        last = [c for s, c in cols.items() if s in _LAST and _plain(c)]
        if len(first) != 1 or len(last) != 1 or \
                (set(cols) & (name_columns(slug(table.name)) | {"full_name", "fullname"})):
            continue
        merged = {slug(first[0].name), slug(last[0].name)}
        table.columns = [DraftColumn(name="name", description="the full name, as the "
                                     "documents write it") if c is first[0] else c
                         for c in table.columns if c is not last[0]]
        _rename(draft, table, merged)
        notes.append(f"table {table.name!r}: {first[0].name} and {last[0].name} made one "
                     "column, name (the documents name a person in one piece)")
    return draft, notes


def _plain(column: DraftColumn) -> bool:
    return column.type == "TEXT" and column.single_valued


def _rename(draft: SchemaDraft, own: DraftTable, merged: set[str]) -> None:
    """Every mention of ``own``'s ``merged`` columns (slugs) becomes ``name``, once."""
    def one(columns: list[str]) -> list[str]:
        return list(dict.fromkeys("name" if slug(c) in merged else c for c in columns))
    table = own.name
    own.primary_key = one(own.primary_key)
    for t in draft.tables:
        kept, seen = [], set()
        for fk in t.foreign_keys:
            if t is own and slug(fk.column) in merged:
                fk.column = "name"
            if slug(fk.references_table) == slug(table) and slug(fk.references_column) in merged:
                fk.references_column = "name"
            key = (fk.column, fk.references_table, fk.references_column)
            if key not in seen:
                seen.add(key)
                kept.append(fk)
        t.foreign_keys = kept
    for c in draft.constraints:
        if slug(c.table) == slug(table):
            c.columns = one(c.columns)
    draft.required_attributes = list(dict.fromkeys(
        f"{t}.name" if slug(t) == slug(table) and slug(col) in merged else a
        for a in draft.required_attributes for t, _, col in [a.partition(".")]))


__all__ = ["whole_names"]
