"""A drafted table that keeps an offered table's name takes its columns' stored wording.

ASK offers the schema draft the tables already extracted from the collection (``offer_known``,
:func:`.offer.relevant_tables`), as their names, typed columns and description: the prompt
asks the model to reuse one exactly when it fits. Re-use needs the same table signature
(name, description, and each column's name, type, unit and description) or, for
:meth:`.store.TupleStore.cover`, the same description and key column definitions. The
measuring model copied what it was shown, names and types, and left out the column
descriptions the offer does not show: its draft of ``laureates(laureate_name, nationality,
field_of_study)`` matched no stored entry, and the second question read 12 chunks again where
it could have read none of them (``benchmarks/docsage_reuse.py``, 2026-11-29).

So a drafted table whose name is an offered table's gives each of its columns that has an
offered column's name, type and number of values per entity the stored description and unit
it left empty, unless what it did write of them says otherwise: what the offer does not
show, so the draft could not have copied it. What the draft wrote stays: names, types, the
table's description (it says which records belong in the table, and a question may mean
more of them than the stored one held), a column's own description or unit ("year of birth"
is not the stored "year the grant was awarded", review 19; a column in "USD" takes nothing
of one in "EUR", review 20), keys, the columns the draft added and the relations. A column
of the same name but another type stays as drafted (it is something else, and is extracted
anew).
"""

from __future__ import annotations

from collections.abc import Sequence

from quaderno.methods.docsage.schema import Schema, Table


def _adopted(table: Table, offered: Table) -> tuple[Table, list[str]]:
    """``table`` whose columns of ``offered``'s name, type and count take its description
    and unit where they have none and say nothing else, and the names of the columns
    changed."""
    changed, columns = [], []
    for c in table.columns:
        o = offered.column(c.name) if c.name in offered.column_names else None
        pairs = [] if o is None or o.type != c.type or o.single_valued != c.single_valued \
            else [(k, getattr(c, k), getattr(o, k)) for k in ("description", "unit")]
        # nothing the draft wrote may say otherwise ("USD" is not the stored "EUR")
        fill = {k: theirs for k, mine, theirs in pairs if theirs and not mine} \
            if all(not mine or mine == theirs for _, mine, theirs in pairs) else {}
        if fill:
            columns.append(c.model_copy(update=fill))
            changed.append(c.name)
        else:
            columns.append(c)
    if not changed:
        return table, []
    return table.model_copy(update={"columns": columns}), changed


def adopt_offered(schema: Schema, offered: Sequence[Table]) -> tuple[Schema, list[str]]:
    """``schema`` whose tables named as an ``offered`` table take its columns' wording where
    they have none (module docstring), and a note for each table changed."""
    by_name = {t.name: t for t in offered}
    tables, notes = [], []
    for t in schema.tables:
        if t.name not in by_name:
            tables.append(t)
            continue
        new, changed = _adopted(t, by_name[t.name])
        tables.append(new)
        if changed:
            notes.append(f"{t.name}: the stored table's wording taken for "
                         f"{', '.join(changed)}, so that its extracted tuples can be re-used")
    if not notes:
        return schema, []
    return Schema.model_validate({**schema.model_dump(), "tables": [
        t.model_dump() for t in tables]}), notes
