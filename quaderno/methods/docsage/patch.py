"""Schema patches: how ASK's F_update revises, expands or prunes S^q (Eq. 3).

The model returns a list of flat :class:`SchemaPatch` records; :func:`apply_patches` applies
them to the draft form of the schema and validates the result, so a patch naming an unknown
table or column is skipped with a note instead of breaking the schema (a ``rekey`` may name
the entity's own name column the table lacks: it is added, :func:`.rekey.may_add_as_key`).
Every applied patch is appended to ``Schema.history`` with the version it produced: the log
of how the schema grew.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from quaderno.errors import ParseError
from quaderno.methods.docsage.draft import (DraftColumn, DraftConstraint, DraftForeignKey,
                                            DraftTable, _Capped, capped, from_schema, slug,
                                            to_schema)
from quaderno.methods.docsage.rekey import (id_column, id_part, may_add_as_key, rekey,
                                            rekey_by_added, rename_in)
from quaderno.methods.docsage.schema import Schema

PatchOp = Literal["add_column", "drop_column", "retype_column", "rename_column", "add_table",
                  "add_foreign_key", "add_constraint", "require_attribute",
                  "mark_multi_valued", "rekey"]


class SchemaPatch(BaseModel):
    op: PatchOp
    table: str
    column: str = ""
    new_name: str = Field(default="", description="rename_column: the new name")
    type: Literal["TEXT", "INT", "DOUBLE", "DATE", "BOOL"] = "TEXT"
    description: str = ""
    unit: str = ""
    single_valued: bool = Field(True, description="add_column: false when one entity has "
                                                  "several values of it")
    # add_foreign_key, and add_column for a column that refers to another table's key
    references_table: str = ""
    references_column: str = ""
    constraint: DraftConstraint | None = None
    key_with: list[str] = Field(default_factory=list,
                                description="rekey: the key's other columns (a table linking "
                                            "two entities is keyed by both references)")


class SchemaUpdate(_Capped):
    """The changes the answers call for; an empty list when the schema already fits."""

    patches: list[SchemaPatch] = capped(8, default_factory=list)


def _find(draft_tables: list[DraftTable], name: str) -> DraftTable | None:
    return next((t for t in draft_tables if slug(t.name) == slug(name)), None)


def _apply_one(tables: list[DraftTable], p: SchemaPatch, constraints: list[DraftConstraint],
               required: list[str]) -> str | None:
    """Apply ``p`` in place; a note when it could not be applied."""
    table = _find(tables, p.table)
    if p.op == "add_table":
        if table is not None:
            return f"add_table {p.table!r}: exists"
        cols = [DraftColumn(name=p.column or "name", type="TEXT", description=p.description)]
        tables.append(DraftTable(name=p.table, description=p.description, columns=cols,
                                 primary_key=[cols[0].name]))
        return None
    if table is None:
        return f"{p.op} on unknown table {p.table!r}"
    if p.op == "add_constraint":
        if p.constraint is None:
            return f"add_constraint on {p.table}: no constraint given"
        constraints.append(p.constraint)
        return None
    col = next((c for c in table.columns if slug(c.name) == slug(p.column)), None)
    if p.op == "rekey" and col is None and p.column and may_add_as_key(
            p.column, table.name, table.primary_key[0] if len(table.primary_key) == 1
            else id_part(table.name, table.primary_key) if table.primary_key
            else id_column(table.name, [c.name for c in table.columns])):
        # a table keyed by an invented id that names nothing is keyed by a name it gains
        return rekey_by_added(tables, table, p.column, constraints, required,
                              key_with=p.key_with, description=p.description)
    if p.op == "add_column":
        if col is not None or not p.column:
            return f"add_column {p.table}.{p.column}: exists or unnamed"
        table.columns.append(DraftColumn(name=p.column, type=p.type,
                                         description=p.description, unit=p.unit,
                                         single_valued=p.single_valued))
        if p.references_table and p.references_column:  # a new reference to another table
            table.foreign_keys.append(DraftForeignKey(column=p.column,
                                                      references_table=p.references_table,
                                                      references_column=p.references_column))
    elif p.op == "require_attribute":
        if col is None:
            return f"require_attribute {p.table}.{p.column}: no such column"
        required.append(f"{slug(p.table)}.{slug(p.column)}")
    elif col is None:
        return f"{p.op} {p.table}.{p.column}: no such column"
    elif p.op == "drop_column":
        if len(table.columns) == 1:
            return f"drop_column {p.table}.{p.column}: the table's only column"
        table.columns.remove(col)
        table.primary_key = [k for k in table.primary_key if slug(k) != slug(col.name)]
        table.foreign_keys = [f for f in table.foreign_keys if slug(f.column) != slug(col.name)]
    elif p.op == "rekey":
        return rekey(tables, table, col, constraints, required, key_with=p.key_with)
    elif p.op == "mark_multi_valued":
        if slug(col.name) in {slug(k) for k in table.primary_key}:
            return f"mark_multi_valued {p.table}.{p.column}: a primary-key column"
        if not col.single_valued:
            return f"mark_multi_valued {p.table}.{p.column}: already multi-valued"
        col.single_valued = False
    elif p.op == "retype_column":
        col.type = p.type
        col.unit = p.unit or col.unit
    elif p.op == "rename_column":
        if not p.new_name:
            return f"rename_column {p.table}.{p.column}: no new name"
        old = slug(col.name)
        rename_in(constraints, required, table.name, col.name, p.new_name)
        col.name = p.new_name
        table.primary_key = [p.new_name if slug(k) == old else k for k in table.primary_key]
        for f in table.foreign_keys:
            if slug(f.column) == old:
                f.column = p.new_name
        for other in tables:  # foreign keys of any table that point at the renamed column
            for f in other.foreign_keys:
                if slug(f.references_table) == slug(table.name) and \
                        slug(f.references_column) == old:
                    f.references_column = p.new_name
    elif p.op == "add_foreign_key":
        table.foreign_keys.append(DraftForeignKey(column=col.name,
                                                  references_table=p.references_table,
                                                  references_column=p.references_column))
    return None


def apply_patches(schema: Schema, patches: list[SchemaPatch], *,
                  reason: str = "") -> tuple[Schema, list[str]]:
    """The schema after ``patches`` (a new version, the applied patches in its history) and
    notes on the patches skipped or repaired. With nothing applied, the schema is returned
    unchanged (same version)."""
    draft = from_schema(schema)
    notes, applied = [], []
    for p in patches:
        note = _apply_one(draft.tables, p, draft.constraints, draft.required_attributes)
        if note:
            notes.append(note)
        else:
            applied.append(p)
    if not applied:
        return schema, notes
    try:
        new, repair = to_schema(draft, version=schema.version + 1)
    except ParseError as exc:
        return schema, [*notes, f"the patched schema was unusable ({exc}); kept version "
                                f"{schema.version}"]
    history = [*schema.history,
               *({"version": new.version, "reason": reason, **p.model_dump(exclude_none=True)}
                 for p in applied)]
    return new.model_copy(update={"history": history}), notes + repair
