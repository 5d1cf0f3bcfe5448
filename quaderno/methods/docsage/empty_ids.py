"""An id column no row fills is left out of the schema the SQL step writes its query for.

The measuring model drafted Set1's ``stedrurial_medal(laureate_id, award_name, year)`` beside
``laureates(laureate_id, name, ...)``; no document numbers a laureate, so extraction left
``laureate_id`` empty in every row of both. Asked for "the laureates in the Stedrurial Medal
whose nationality is Kraxryndia", the model joined ``laureates.name`` to
``stedrurial_medal.laureate_id``, got AVG over nothing, and wrote the same join again when
told the column was empty (``empty-docsage-set1``, ``resample-docsage-set1``). A column named
as an id (:func:`.rekey.id_named`: ``id``, ``laureate_id``, ``companyid``) that every row of
its table leaves NULL can neither be shown nor joined: only a join that matches nothing can
use it. Such a column is left out of the schema :class:`.reason.SQLReasoner` describes,
samples, checks and runs against, with every foreign key through it; never a primary key's
part (the table's structure), never in a table with no row (nothing was read: nothing is
known to be empty), never the table's last column. The run's recorded schema keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence

from quaderno.methods.docsage.normalize import is_null
from quaderno.methods.docsage.rekey import id_named
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table


def _empty_ids(table: Table, rows: Sequence[Row]) -> list[str]:
    mine = [r for r in rows if r.table == table.name]
    if not mine:
        return []
    empty = [c for c in table.column_names if c not in table.primary_key
             and id_named(c, table.name) and all(is_null(r.values.get(c)) for r in mine)]
    return empty if len(empty) < len(table.columns) else []


def without_empty_ids(schema: Schema, rows: Sequence[Row]) -> tuple[Schema, list[str]]:
    """(schema, left out): ``schema`` without the id columns no row of their table fills
    (module docstring), and those columns as "table.column"."""
    empty = {t.name: set(_empty_ids(t, rows)) for t in schema.tables}
    if not any(empty.values()):
        return schema, []
    tables = []
    for t in schema.tables:
        gone = empty[t.name]
        keys = [fk for fk in t.foreign_keys if not gone & set(fk.cols)
                and not empty.get(fk.ref_table, set()) & set(fk.ref_cols)]
        tables.append(t.model_copy(update={
            "columns": [c for c in t.columns if c.name not in gone], "foreign_keys": keys}))
    left = [f"{t.name}.{c}" for t in schema.tables for c in t.column_names
            if c in empty[t.name]]
    return schema.model_copy(update={"tables": tables}), left


__all__ = ["without_empty_ids"]
