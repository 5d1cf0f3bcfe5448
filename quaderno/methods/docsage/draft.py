"""The schema as the LLM writes it, and its conversion into a validated :class:`Schema`.

The model is asked for a flat, forgiving draft (no discriminated unions, foreign keys as
single columns, constraints as small records) because small and mid-size models follow such
shapes under constrained decoding. :func:`to_schema` turns it into a :class:`Schema`:
names are slugified into identifiers, a key naming an unknown column, a foreign key to an
unknown table or a malformed constraint is dropped, and each repair is returned as a note
(the method records them as fallbacks). A draft that yields no table raises ParseError.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from quaderno.errors import ParseError
from quaderno.methods.docsage.identifiers import avoided, identifier
from quaderno.methods.docsage.schema import (Column, Constraint, ForeignKey,
                                             FunctionalDependency, NumericRange, QueryRequirements,
                                             Schema, Table, TemporalOrder)


MAX_TABLES, MAX_COLUMNS = 4, 12  # a question's schema is small (spec §1: minimal)
MAX_REFERENCES, MAX_REQUIRED = 4, 12  # foreign keys per table, required attributes


def capped(n: int, **kw: Any) -> Any:
    """A list field of at most ``n`` items: ``maxItems`` in the JSON schema, so a grammar
    stops a small model that would list on to its token limit, and longer lists from an
    unconstrained model are cut, not refused."""
    return Field(json_schema_extra={"maxItems": n}, **kw)


class _Capped(BaseModel):
    """Cuts each capped list field to its ``maxItems`` before validation."""

    @model_validator(mode="before")
    @classmethod
    def _cut(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name, info in cls.model_fields.items():
                extra = info.json_schema_extra
                cap = extra.get("maxItems") if isinstance(extra, dict) else None
                if cap and isinstance(data.get(name), list):
                    data = {**data, name: data[name][:cap]}
        return data


class DraftColumn(BaseModel):
    name: str
    type: Literal["TEXT", "INT", "DOUBLE", "DATE", "BOOL"] = "TEXT"
    description: str = ""
    unit: str = ""
    single_valued: bool = Field(True, description="false when one entity has several values "
                                                  "of it (a company's products): one row per "
                                                  "value")


class DraftForeignKey(BaseModel):
    column: str = Field(description="a column of this table")
    references_table: str
    references_column: str


class DraftTable(_Capped):
    name: str
    description: str = ""
    columns: list[DraftColumn] = capped(MAX_COLUMNS)
    primary_key: list[str] = capped(3, default_factory=list)
    foreign_keys: list[DraftForeignKey] = capped(MAX_REFERENCES, default_factory=list)


class DraftConstraint(BaseModel):
    kind: Literal["functional_dependency", "temporal_order", "range"]
    table: str
    columns: list[str] = Field(description="fd: [determinant..., dependent]; temporal_order: "
                                           "[earlier, later]; range: [column]")
    low: float | None = None
    high: float | None = None


class SchemaDraft(_Capped):
    """A relational schema for the question: the fewest tables and columns that answer it."""

    tables: list[DraftTable] = capped(MAX_TABLES, description="tables, each with typed "
                                                              "columns; give every table a "
                                                              "primary key")
    constraints: list[DraftConstraint] = capped(6, default_factory=list)
    entity_types: list[str] = capped(4, default_factory=list)
    required_attributes: list[str] = capped(MAX_REQUIRED, default_factory=list,
                                            description="table.column values the answer needs")
    join_path: list[str] = capped(MAX_TABLES, default_factory=list,
                                  description="the tables the question joins, in order")


def slug(name: str) -> str:
    """A plain identifier made from ``name`` ("Start Year" → ``start_year``)."""
    text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode()
    text = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:60] or "x"
    if not text[0].isalpha():
        text = f"c_{text}"
    return f"{text}_" if avoided(text) else text


def _columns(dt: DraftTable, notes: list[str]) -> list[Column]:
    out: dict[str, Column] = {}
    for dc in dt.columns:
        name = slug(dc.name)
        if name == "_tid" or name in out:
            notes.append(f"table {dt.name!r}: dropped repeated column {dc.name!r}")
            continue
        out[name] = Column(name=name, type=dc.type, description=dc.description, unit=dc.unit,
                           single_valued=dc.single_valued)
    return list(out.values())


def to_schema(draft: SchemaDraft, *, version: int = 0) -> tuple[Schema, list[str]]:
    """A valid :class:`Schema` from a draft, and notes on every repair made."""
    notes: list[str] = []
    tables: dict[str, Table] = {}
    pending: list[tuple[str, DraftForeignKey]] = []
    for dt in draft.tables:
        name = slug(dt.name)
        cols = _columns(dt, notes)
        if not cols or name in tables:
            notes.append(f"dropped table {dt.name!r}: " + ("no columns" if not cols
                                                           else "repeated name"))
            continue
        names = {c.name for c in cols}
        pk = [slug(c) for c in dt.primary_key]
        if any(c not in names for c in pk):
            notes.append(f"table {name!r}: primary key {dt.primary_key} names unknown columns; "
                         "dropped it")
            pk = []
        tables[name] = Table(name=name, description=dt.description, columns=cols,
                             primary_key=pk)
        pending.extend((name, fk) for fk in dt.foreign_keys)
    if not tables:
        raise ParseError("the schema draft has no usable table")
    for name, fk in pending:
        col, ref, ref_col = slug(fk.column), slug(fk.references_table), slug(fk.references_column)
        target = tables.get(ref)
        if col not in tables[name].column_names or target is None \
                or ref_col not in target.column_names:
            notes.append(f"table {name!r}: dropped foreign key {fk.column} -> "
                         f"{fk.references_table}.{fk.references_column} (unknown table/column)")
            continue
        t = tables[name]
        fks = [*t.foreign_keys, ForeignKey(cols=[col], ref_table=ref, ref_cols=[ref_col])]
        tables[name] = t.model_copy(update={"foreign_keys": fks})
    constraints = [c for dc in draft.constraints
                   if (c := _constraint(dc, tables, notes)) is not None]
    # kept even when the schema lacks them: that is the missing relationship ASK looks for
    attrs = [f"{slug(t)}.{slug(c)}" for a in draft.required_attributes
             for t, _, c in [a.partition(".")] if c]
    reqs = QueryRequirements(entity_types=draft.entity_types, attributes=attrs,
                             join_path=[slug(t) for t in draft.join_path])
    try:
        schema = Schema(tables=list(tables.values()), constraints=constraints,
                        requirements=reqs, version=version)
    except ValidationError as exc:  # defensive: every reference was checked above
        raise ParseError(f"the schema draft is inconsistent: {exc}") from None
    return schema, notes


def _constraint(dc: DraftConstraint, tables: dict[str, Table],
                notes: list[str]) -> Constraint | None:
    table = tables.get(slug(dc.table))
    cols = [slug(c) for c in dc.columns]
    if table is None or not cols or any(c not in table.column_names for c in cols):
        notes.append(f"dropped {dc.kind} constraint on {dc.table}{dc.columns}: unknown "
                     "table or column")
        return None
    types = [table.column(c).type for c in cols]
    if dc.kind == "range" and types[0] not in ("INT", "DOUBLE"):
        notes.append(f"dropped range constraint on {table.name}.{cols[0]}: a {types[0]} "
                     "column has no numeric range")
        return None
    if dc.kind == "temporal_order" and len(cols) == 2 and (
            len({"DATE" if t == "DATE" else "NUM" if t in ("INT", "DOUBLE") else t
                 for t in types}) != 1 or "TEXT" in types or "BOOL" in types):
        notes.append(f"dropped temporal_order constraint on {table.name}{cols}: the columns "
                     f"are {types[0]} and {types[1]}, not two dates or two years")
        return None
    try:
        if dc.kind == "functional_dependency" and len(cols) >= 2:
            return FunctionalDependency(table=table.name, lhs=cols[:-1], rhs=cols[-1])
        if dc.kind == "temporal_order" and len(cols) == 2:
            return TemporalOrder(table=table.name, before=cols[0], after=cols[1])
        if dc.kind == "range" and len(cols) == 1:
            return NumericRange(table=table.name, column=cols[0], low=dc.low, high=dc.high)
    except ValidationError as exc:
        notes.append(f"dropped {dc.kind} constraint on {table.name}: {exc.errors()[0]['msg']}")
        return None
    notes.append(f"dropped {dc.kind} constraint on {table.name}{cols}: wrong number of columns")
    return None


def from_schema(schema: Schema) -> SchemaDraft:
    """The draft form of a schema: what F_update shows the model and edits."""
    tables = [DraftTable(name=t.name, description=t.description,
                         columns=[DraftColumn(name=c.name, type=c.type,
                                              description=c.description, unit=c.unit,
                                              single_valued=c.single_valued)
                                  for c in t.columns],
                         primary_key=t.primary_key,
                         foreign_keys=[DraftForeignKey(column=fk.cols[0],
                                                       references_table=fk.ref_table,
                                                       references_column=fk.ref_cols[0])
                                       for fk in t.foreign_keys])
              for t in schema.tables]
    cons = []
    for c in schema.constraints:
        if isinstance(c, FunctionalDependency):
            cons.append(DraftConstraint(kind="functional_dependency", table=c.table,
                                        columns=[*c.lhs, c.rhs]))
        elif isinstance(c, TemporalOrder):
            cons.append(DraftConstraint(kind="temporal_order", table=c.table,
                                        columns=[c.before, c.after]))
        elif isinstance(c, NumericRange):
            cons.append(DraftConstraint(kind="range", table=c.table, columns=[c.column],
                                        low=c.low, high=c.high))
    r = schema.requirements
    return SchemaDraft(tables=tables, constraints=cons, entity_types=r.entity_types,
                       required_attributes=r.attributes, join_path=r.join_path)


def rename_table(draft: SchemaDraft, old: str, new: str) -> None:
    """Every mention of table ``old`` in ``draft`` (references, constraints, requirements,
    entity types, join path) names ``new``, in place; the tables themselves are not
    renamed."""
    def swap(name: str) -> str:
        return new if slug(name) == slug(old) else name
    for t in draft.tables:
        for fk in t.foreign_keys:
            fk.references_table = swap(fk.references_table)
    for c in draft.constraints:
        c.table = swap(c.table)
    draft.required_attributes = [f"{swap(t)}.{c}" if sep else a
                                 for a in draft.required_attributes
                                 for t, sep, c in [a.partition(".")]]
    draft.entity_types = list(dict.fromkeys(swap(e) for e in draft.entity_types))
    draft.join_path = list(dict.fromkeys(swap(t) for t in draft.join_path))


__all__ = ["SchemaDraft", "DraftTable", "DraftColumn", "DraftForeignKey", "DraftConstraint",
           "to_schema", "from_schema", "rename_table", "slug", "identifier"]
