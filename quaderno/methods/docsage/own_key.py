"""A table discovery left without a primary key, keyed by the column naming its entity (a
schema repair).

The measuring model drafts Set2's ``companies(company_name, sector, …, commission_name)``
without a primary key, and every Set2 schema since ``docsage-stated`` had none. Rows were
already aligned by ``company_name`` (:func:`.normalize.key_columns` falls back to the first
TEXT column), but without a declared key no duplicate key and no functional dependency is
checked (:meth:`.schema.Schema.all_constraints`): two rows of Raextaendnas Bank, with 75,440
and 78 employees, both reached the SQL, and the average over offices counted Kryslias
Systems twice (``docsage-head-set2``). When ASK's rounds end (after the references the
column names imply are declared, :func:`.ask._declare_references`), a table with no primary
key is keyed by the one single-valued TEXT column that names its entity
(:func:`.rekey.mislabeled_names`: ``name``, ``company_name``; ``title`` for works). Left as
they are:

* a table with no such column, or several (``name`` beside ``company_name``), or whose name
  column is marked multi-valued;
* a table another table's foreign key refers to by some other column: that column names it;
* a table with an undeclared column naming another table's entity (``commissions
  (commission_name, company_name)``: a roster, one row per member, its key would be both
  columns; the link the other way round, :func:`.misplaced.back_links`); a declared
  reference is no attribute of its own either (a company's one commission);
* a table with a column saying when its row holds (a year, a date, a season:
  ``tournaments(name, year, winner)``, ``movies(title, year)``, yearly revenues), whose
  rows are several per name; a date of the entity itself (``founded_year``,
  ``birth_date``) is an attribute;
* a table with no number beside its name and fewer than two other columns
  (``teams(team_name, player)``: a roster), whose name and other column are both its
  identity.

The key is the row identity CLEAR already merged by, now declared: its unique-key and
dependency checks run, and the SQL prompt shows it. Each repair is noted. Known risk: a
table of entities with several rows per name the model marked single-valued (a team's
``player`` beside its ``city``) is checked as one entity, as when the model declares that
key itself.
"""

from __future__ import annotations


from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.rekey import id_column, mislabeled_names, name_columns
from quaderno.methods.docsage.schema import Column, Schema, Table


# a column saying which of several rows of one name a row is: a year, a date, a season ...
_WHEN = frozenset("year date season edition quarter month week day as_of asof fiscal_year "
                  "start_date start_year".split())
_WHEN_END = ("_year", "_date", "_season", "_edition", "_quarter", "year", "date")
# ... unless it dates the entity itself: its founding, birth, death, an update of the row
_ONCE = frozenset("found founded founding birth born dob death died establish established "
                  "incorporated incorporation inaugurated opened opening created creation "
                  "launch launched built updated update modified debut retirement ipo "
                  "independence construction completion completed".split())


def says_when(column: Column) -> bool:
    """``column`` says when its row holds (a year, a date, a season), not when the entity
    itself was founded, born or updated (module docstring)."""
    name = slug(column.name)
    tokens = set(name.split("_")) | {name}
    if tokens & _ONCE or any(name.startswith(w) for w in ("found", "birth", "death",
                                                         "establish", "updat")):
        return False
    return name in _WHEN or name.endswith(_WHEN_END) or column.type == "DATE"


def _dated(table: Table) -> bool:
    """A column of ``table`` says when its row holds (module docstring)."""
    return any(says_when(c) for c in table.columns)


def _name_column(table: Table) -> str | None:
    """The one single-valued TEXT column naming ``table``'s entity, or None."""
    own = mislabeled_names(table.name)
    names = [c for c in table.columns if slug(c.name) in own]
    if len(names) != 1 or names[0].type != "TEXT" or not names[0].single_valued:
        return None
    return names[0].name


def _names_another(column: str, table: Table, schema: Schema) -> bool:
    """``column`` of ``table`` is named after another table's entity (its name or its id:
    ``company_name``, ``companyid`` in ``commissions``)."""
    c = slug(column)
    return c != "id" and any(c in name_columns(o.name) or id_column(o.name, [c]) is not None
                             for o in schema.tables if o.name != table.name)


def own_key_column(table: Table, schema: Schema) -> str | None:
    """The column to key ``table`` by (module docstring), or None (for a table with a
    primary key too). ASK's join repair refers to it before the key is declared
    (:func:`.joins.join_fix`)."""
    if table.primary_key or (name := _name_column(table)) is None:
        return None
    referred = {c for t in schema.tables for fk in t.foreign_keys if fk.ref_table == table.name
                for c in fk.ref_cols}
    if referred - {name}:
        return None
    declared = {c for fk in table.foreign_keys for c in fk.cols}
    if any(c.name != name and c.name not in declared and _names_another(c.name, table, schema)
           for c in table.columns):
        return None
    # what a row says of its entity: columns neither its name nor a reference
    attributes = [c for c in table.columns if c.name != name and c.name not in declared]
    if _dated(table):
        return None          # one row per year or date: several rows per name
    if not any(c.type in ("INT", "DOUBLE") for c in attributes) and len(attributes) < 2:
        return None          # a name and one text beside it: a roster (team, player)
    return name


def own_keys(schema: Schema) -> tuple[Schema, list[str]]:
    """``schema`` with each keyless table keyed by its name column (module docstring), and a
    note per table keyed."""
    keys = {t.name: key for t in schema.tables if (key := own_key_column(t, schema)) is not None}
    if not keys:
        return schema, []
    body = schema.model_dump()
    for t in body["tables"]:
        if t["name"] in keys:
            t["primary_key"] = [keys[t["name"]]]
    notes = [f"table {t!r} had no primary key: keyed by {k}, the column naming its entity"
             for t, k in keys.items()]
    # a repair of the same version, as the draft repairs are: nothing is extracted anew
    body["history"] = [*schema.history, *({"version": schema.version, "reason": note}
                                           for note in notes)]
    return Schema.model_validate(body), notes


__all__ = ["own_key_column", "own_keys", "says_when"]
