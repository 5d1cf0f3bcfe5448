"""Single mode's one table (the SRAG-style baseline the spec recommends, ``srag``): of a
draft of several tables, the one that holds most of what the question needs, alone, without
its references to the others."""

from __future__ import annotations

from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.rekey import singular
from quaderno.methods.docsage.schema import Schema, Table, constraint_columns


def links_only(table: Table) -> bool:
    """``table`` only links others: two or more references and no column besides them (a
    membership with its ``joined_year`` holds something of its own)."""
    refs = {c for fk in table.foreign_keys for c in fk.cols}
    return len(table.foreign_keys) > 1 and set(table.column_names) <= refs


def one_table(schema: Schema) -> tuple[Schema, str]:
    """One table of ``schema`` alone (single mode), with a note saying so: the one holding
    most of the attributes the question requires, the first of those tied, never a table
    that only links others while another is there. Its references to the others are
    dropped, as are the constraints, requirements and entity types naming them."""
    req = schema.requirements
    wanted = [a.split(".")[0] for a in req.attributes]
    order = {t.name: i for i, t in enumerate(schema.tables)}
    first = max(schema.tables, key=lambda t: (not links_only(t), wanted.count(t.name),
                                              -order[t.name]))
    dropped = [t.name for t in schema.tables if t is not first]
    dropped_types = {singular(slug(d)) for d in dropped}     # as entity types name them
    kept = first.model_copy(update={"foreign_keys": []})
    constraints = [c for c in schema.constraints
                   if all(t == first.name for t, _ in constraint_columns(c))]
    requirements = req.model_copy(update={
        "entity_types": [e for e in req.entity_types if singular(slug(e)) not in dropped_types],
        "attributes": [a for a in req.attributes if a.split(".")[0] == first.name],
        "join_path": [t for t in req.join_path if t == first.name]})
    one = schema.model_copy(update={"tables": [kept], "constraints": constraints,
                                    "requirements": requirements})
    return Schema.model_validate(one.model_dump()), (
        f"the single-table draft had {len(schema.tables)} tables; kept {first.name}, "
        f"left out {', '.join(dropped)}")


__all__ = ["links_only", "one_table"]
