"""DocSage's query-specific schema S^q as a typed object (spec §1).

A :class:`Schema` holds tables of typed columns with descriptions and units, primary and
foreign keys, the constraints C(S^q) that CLEAR checks, and the query requirements that ASK's
missing-relationship detector and the minimality check read. It becomes DuckDB DDL with
:meth:`Schema.ddl`; every table gets a ``_tid`` column that ties a row to its provenance.

Table and column names are plain SQL identifiers, checked when the schema is built
(:mod:`.identifiers`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from quaderno.methods.docsage.identifiers import identifier

ColumnType = Literal["TEXT", "INT", "DOUBLE", "DATE", "BOOL"]
DUCK_TYPES: dict[str, str] = {"TEXT": "VARCHAR", "INT": "BIGINT", "DOUBLE": "DOUBLE",
                              "DATE": "DATE", "BOOL": "BOOLEAN"}
TID = "_tid"  # the row id column every table carries

# a description or unit is written by a model that read untrusted documents, and prompts show
# it beside their instructions (:meth:`Schema.describe`): one line, and short
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")
MAX_DESCRIPTION = 200
MAX_UNIT = 40


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (line breaks and control characters as spaces, runs of spaces as
    one) and at most ``limit`` characters, cut with an ellipsis: the schema's words stay
    words, and cannot open a paragraph of their own in a prompt."""
    flat = " ".join(_CONTROL.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "\u2026"


class Column(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    type: ColumnType = "TEXT"
    description: str = ""
    unit: str = ""
    nullable: bool = True
    # one value per entity (a founding year); False for a column an entity has several values
    # of, one row each (a company's products; the generic table's attributes and values)
    single_valued: bool = True

    def definition(self) -> list[Any]:
        """What extraction into this column depends on. A single-valued column's definition
        is what it was before multi-valued columns were shown to the model, so tuples stored
        for such tables keep their keys (those of a table with multi-valued columns, the
        generic schema's among them, changed once: they are extracted again)."""
        return [self.name, self.type, self.unit, self.description,
                *([] if self.single_valued else ["multi-valued"])]

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if v == TID:
            raise ValueError(f"column name {TID!r} is reserved for the row id")
        return identifier(v, "column name")

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return one_line(v, MAX_DESCRIPTION)

    @field_validator("unit")
    @classmethod
    def _unit(cls, v: str) -> str:
        return one_line(v, MAX_UNIT)


class ForeignKey(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cols: list[str] = Field(min_length=1)
    ref_table: str
    ref_cols: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _shape(self) -> ForeignKey:
        self.cols = [identifier(c, "foreign-key column") for c in self.cols]
        self.ref_cols = [identifier(c, "referenced column") for c in self.ref_cols]
        self.ref_table = identifier(self.ref_table, "referenced table")
        if len(self.cols) != len(self.ref_cols):
            raise ValueError(f"foreign key {self.cols} -> {self.ref_table}{self.ref_cols}: "
                             "column counts differ")
        return self


class Table(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    columns: list[Column] = Field(min_length=1)
    primary_key: list[str] = Field(default_factory=list)
    foreign_keys: list[ForeignKey] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return identifier(v, "table name")

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return one_line(v, MAX_DESCRIPTION)

    @model_validator(mode="after")
    def _keys(self) -> Table:
        names = [c.name for c in self.columns]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"table {self.name!r} repeats column(s) {dupes}")
        self.primary_key = [identifier(c, "primary-key column") for c in self.primary_key]
        for col in self.primary_key + [c for fk in self.foreign_keys for c in fk.cols]:
            if col not in names:
                raise ValueError(f"table {self.name!r} has no column {col!r} (columns: {names})")
        return self

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"table {self.name!r} has no column {name!r}")

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def multi_valued(self, keys: Sequence[str]) -> list[str]:
        """The columns an entity has several values of (one row per value), ``keys`` aside."""
        return [c.name for c in self.columns if not c.single_valued and c.name not in keys]

    def signature(self) -> str:
        """Hash of what extraction into this table depends on: its name, description and
        columns (name, type, unit, description, and whether an entity has one value or a row
        per value). Keys, constraints and other tables do not change what a chunk says, so
        they are left out: a later question whose schema shares this table re-uses its
        extracted tuples."""
        body = {"name": self.name, "description": self.description,
                "columns": [c.definition() for c in self.columns]}
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]

    def ddl(self) -> str:
        """CREATE TABLE for the staging and query databases. Keys are not declared: staging
        must hold duplicate keys and dangling references so CLEAR can find them."""
        cols = [f"{TID} BIGINT NOT NULL"] + [f"{c.name} {DUCK_TYPES[c.type]}"
                                             for c in self.columns]
        return f"CREATE TABLE {self.name} ({', '.join(cols)})"


# -- constraints C(S^q), spec §3 Level B -----------------------------------------------------
class FunctionalDependency(BaseModel):
    """lhs → rhs: one rhs value per lhs value (``Person_ID → Date_of_Birth``)."""

    kind: Literal["fd"] = "fd"
    table: str
    lhs: list[str] = Field(min_length=1)
    rhs: str


class TemporalOrder(BaseModel):
    """``before`` precedes ``after`` in every row (``Admission_Time < Discharge_Time``)."""

    kind: Literal["temporal"] = "temporal"
    table: str
    before: str
    after: str
    strict: bool = False


class NumericRange(BaseModel):
    """``column`` lies within [low, high] (``Age`` within a known safe range)."""

    kind: Literal["range"] = "range"
    table: str
    column: str
    low: float | None = None
    high: float | None = None

    @model_validator(mode="after")
    def _bounds(self) -> NumericRange:
        if self.low is None and self.high is None:
            raise ValueError(f"range constraint on {self.table}.{self.column} has no bound")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"range constraint on {self.table}.{self.column}: low {self.low} "
                             f"> high {self.high}")
        return self


class ReferentialIntegrity(BaseModel):
    """Every ``table.cols`` value exists in ``ref_table.ref_cols``."""

    kind: Literal["fk"] = "fk"
    table: str
    cols: list[str] = Field(min_length=1)
    ref_table: str
    ref_cols: list[str] = Field(min_length=1)


class UniqueKey(BaseModel):
    """No two rows share ``cols`` (a primary key)."""

    kind: Literal["unique"] = "unique"
    table: str
    cols: list[str] = Field(min_length=1)


Constraint = Annotated[FunctionalDependency | TemporalOrder | NumericRange
                       | ReferentialIntegrity | UniqueKey, Field(discriminator="kind")]


def constraint_columns(c: Constraint) -> list[tuple[str, str]]:
    """(table, column) pairs a constraint reads."""
    if isinstance(c, FunctionalDependency):
        return [(c.table, x) for x in c.lhs + [c.rhs]]
    if isinstance(c, TemporalOrder):
        return [(c.table, c.before), (c.table, c.after)]
    if isinstance(c, NumericRange):
        return [(c.table, c.column)]
    if isinstance(c, ReferentialIntegrity):
        return [(c.table, x) for x in c.cols] + [(c.ref_table, x) for x in c.ref_cols]
    return [(c.table, x) for x in c.cols]


class QueryRequirements(BaseModel):
    """What the question needs: entity types, ``table.column`` attributes, and the tables on
    its join path (all must be connected by foreign keys)."""

    model_config = ConfigDict(extra="forbid")

    entity_types: list[str] = Field(default_factory=list)
    attributes: list[str] = Field(default_factory=list)
    join_path: list[str] = Field(default_factory=list)


class Schema(BaseModel):
    """S^q: the tables, constraints and requirements of one question's database."""

    model_config = ConfigDict(extra="forbid")

    tables: list[Table] = Field(min_length=1)
    constraints: list[Constraint] = Field(default_factory=list)
    requirements: QueryRequirements = Field(default_factory=QueryRequirements)
    version: int = 0
    history: list[dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references(self) -> Schema:
        names = [t.name for t in self.tables]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"schema repeats table(s) {dupes}")
        for t in self.tables:
            for fk in t.foreign_keys:
                self._need(fk.ref_table, fk.ref_cols, f"foreign key of {t.name!r}")
        for c in self.constraints:
            for table, col in constraint_columns(c):
                self._need(table, [col], f"{c.kind} constraint")
        return self

    def _need(self, table: str, cols: list[str], what: str) -> None:
        t = self.table(table)
        if t is None:
            raise ValueError(f"{what} names unknown table {table!r} "
                             f"(tables: {[x.name for x in self.tables]})")
        missing = [c for c in cols if c not in t.column_names]
        if missing:
            raise ValueError(f"{what} names unknown column(s) {missing} of {table!r} "
                             f"(columns: {t.column_names})")

    def table(self, name: str) -> Table | None:
        return next((t for t in self.tables if t.name == name), None)

    def ddl(self) -> list[str]:
        return [t.ddl() for t in self.tables]

    def mapping(self) -> dict[str, dict[str, str]]:
        """{table: {column: DuckDB type}}, ``_tid`` included: what sqlglot qualifies against."""
        return {t.name: {TID: "BIGINT"} | {c.name: DUCK_TYPES[c.type] for c in t.columns}
                for t in self.tables}

    def all_constraints(self) -> list[Constraint]:
        """The declared constraints plus those the keys imply (unique primary keys, foreign
        keys' referential integrity), without duplicates. A table with multi-valued columns
        holds one row per value: its rows are unique on the key and those columns."""
        out: list[Constraint] = list(self.constraints)
        for t in self.tables:
            if t.primary_key:
                out.append(UniqueKey(table=t.name, cols=[*t.primary_key,
                                                         *t.multi_valued(t.primary_key)]))
            for fk in t.foreign_keys:
                out.append(ReferentialIntegrity(table=t.name, cols=fk.cols,
                                                ref_table=fk.ref_table, ref_cols=fk.ref_cols))
        seen, unique = set(), []
        for c in out:
            key = json.dumps(c.model_dump(), sort_keys=True)
            if key not in seen:
                seen.add(key)
                unique.append(c)
        return unique

    def canonical_hash(self) -> str:
        """Hash of the structure (tables, keys, constraints, requirements) without version and
        history: ASK stops when it is unchanged between two rounds."""
        body = self.model_dump(mode="json", exclude={"version", "history"})
        body["tables"] = sorted(body["tables"], key=lambda t: t["name"])
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]

    def pruned(self) -> Schema:
        """The minimal schema: columns neither required by the question, nor keys, nor read by
        a constraint are dropped (spec §1 minimality). Without requirements nothing is pruned."""
        if not self.requirements.attributes:
            return self
        keep = {tuple(a.split(".", 1)) for a in self.requirements.attributes if "." in a}
        for t in self.tables:
            keep |= {(t.name, c) for c in t.primary_key}
            for fk in t.foreign_keys:
                keep |= {(t.name, c) for c in fk.cols} | {(fk.ref_table, c) for c in fk.ref_cols}
        for c in self.constraints:
            keep |= set(constraint_columns(c))
        tables = []
        for t in self.tables:
            cols = [c for c in t.columns if (t.name, c.name) in keep]
            if cols:
                tables.append(t.model_copy(update={"columns": cols}))
        kept = {t.name for t in tables}
        reqs = self.requirements.model_copy(
            update={"join_path": [n for n in self.requirements.join_path if n in kept]})
        return Schema(tables=tables, constraints=self.constraints, requirements=reqs,
                      version=self.version, history=self.history)

    def describe(self) -> str:
        """The schema as prompts show it: DDL lines with each column's description and unit."""
        lines = []
        for t in self.tables:
            lines.append(f"TABLE {t.name}" + (f" -- {t.description}" if t.description else ""))
            for c in t.columns:
                note = "; ".join(x for x in (
                    c.description, f"unit: {c.unit}" if c.unit else "",
                    "" if c.single_valued else "several per entity, one row each") if x)
                lines.append(f"  {c.name} {c.type}" + (f" -- {note}" if note else ""))
            if t.primary_key:
                lines.append(f"  PRIMARY KEY ({', '.join(t.primary_key)})")
            for fk in t.foreign_keys:
                lines.append(f"  FOREIGN KEY ({', '.join(fk.cols)}) REFERENCES "
                             f"{fk.ref_table} ({', '.join(fk.ref_cols)})")
        return "\n".join(lines)


def generic_schema() -> Schema:
    """The schema of the "w/o schema discovery" ablation: one entity-attribute-value table
    that fits any question, so the SQL must pivot what a discovered schema would hold."""
    return Schema(tables=[Table(
        name="facts", description="every fact the documents state about an entity",
        columns=[Column(name="entity", description="the entity's name"),
                 Column(name="entity_type", description="what kind of entity it is"),
                 Column(name="attribute", description="the property or relation stated",
                        single_valued=False),
                 Column(name="value", description="the value as written",
                        single_valued=False),
                 Column(name="unit", single_valued=False),
                 Column(name="as_of", description="the year the value holds for, if stated",
                        single_valued=False)])])
