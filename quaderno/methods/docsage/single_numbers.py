"""A number marked multi-valued in a table that says nothing of when, made one value (a draft
repair).

The 1.5B measuring model marked ``employees`` and ``revenue`` of its Set2 ``companies``
table multi-valued (and a Set3 city's ``population``). A multi-valued column is part of what
tells rows apart (:func:`.normalize.row_identity`), so two chunks giving one company two
revenues made two rows, neither merged nor checked as a conflict, and the SQL averaged over
both. Several numbers of one measure for one entity mean something only beside a column
saying which one (a year, a date, a season, a quarter); without one, a query cannot tell
them apart. So, in an entity's own table (keyed by the entity's name or its own id:
``companies`` by ``company_name`` or ``id``, ``cities`` by ``name``) with no such column, a
numeric column marked multi-valued is marked single-valued, with a note, unless it shares a
word with a multi-valued text column (a product's ``product_price`` beside ``product``: one
price per product). Text columns keep their mark (a company's products are several), and so
does a table keyed by anything else (``awards`` keyed by the laureate holds one prize money
per award) or by nothing.
"""

from __future__ import annotations

import re

from quaderno.methods.docsage.draft import DraftTable, SchemaDraft, slug
from quaderno.methods.docsage.rekey import id_column, name_columns

# a column that says when, or which of several, a number is
_WHEN = re.compile(r"year|date|season|quarter|month|period|week|day|edition|round|as_of|time")


def _says_when(table: DraftTable) -> bool:
    return any(c.type == "DATE" or _WHEN.search(slug(c.name)) for c in table.columns)


def _own_key(table: DraftTable) -> bool:
    """``table`` is keyed by its entity's name or own id (``company_name`` or ``id`` of
    ``companies``; not ``laureate_id`` of ``awards``)."""
    key = slug(table.primary_key[0])
    return key in name_columns(slug(table.name)) or id_column(table.name, [key]) is not None


def single_numbers(draft: SchemaDraft) -> tuple[SchemaDraft, list[str]]:
    """``draft`` with every multi-valued number of an entity's own table that has no column
    saying when marked single-valued (module docstring), and a note per table changed."""
    draft = draft.model_copy(deep=True)
    notes: list[str] = []
    for table in draft.tables:
        if len(table.primary_key) != 1 or _says_when(table) or not _own_key(table):
            continue
        key = slug(table.primary_key[0])
        # the words of the multi-valued text columns a number may be one per value of
        which = {w for c in table.columns if c.type == "TEXT" and not c.single_valued
                 for w in slug(c.name).split("_")}
        marked = [c for c in table.columns if c.type in ("INT", "DOUBLE")
                  and not c.single_valued and slug(c.name) != key
                  and not set(slug(c.name).split("_")) & which]
        for c in marked:
            c.single_valued = True
        if marked:
            notes.append(f"table {table.name!r}: {', '.join(c.name for c in marked)} marked "
                         "single-valued: one number per entity, since no column says when")
    return draft, notes


__all__ = ["single_numbers"]
