"""Rows of one key that name different entities they belong to: namesakes, not a conflict.

The benchmark plants a namesake beside a member: "Kryslias Systems is a company of the Sopael
Markets Commission" (320 employees, 161 offices) beside the Drournlia Markets Commission's
Kryslias Systems (137,890 employees, 143 offices). Keyed by ``company_name``, the two rows
break the key's dependencies, and CLEAR's backtracking wrote one judged value into every row
of the violation: the Drournlia member could take the namesake's 320 employees, and the
question "the company with the fewest employees in the Drournlia Markets Commission" would
name it. The merge already keeps such rows apart (:func:`.aliases.merge_entities` merges
only rows that do not contradict each other); the conflict step now does too.

A key's rows are split by the references they hold beside the key to a table of names (a
company's ``commission_name``): when two name different entities, each entity's rows are
settled among themselves. A row naming none joins the entity most of the rows name (the
member of the question's commission has several documents, its namesake one), and is left
out when no entity is named most often: it cannot be told whose it is, and its value stays
a duplicate of the key (a query filtering by the reference does not read it). With one
entity named, or none, the rows are one group, as before. The reference column itself is
then never a conflict between namesakes: each keeps its own. A reference to a table with
more to say (a company's city) does not split: a misread city is a conflict to settle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

from quaderno.methods.docsage.misplaced import name_references
from quaderno.methods.docsage.normalize import normalize_entity
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table


def belonging(table: Table, key: Sequence[str], references: Mapping[str, list]) -> list[str]:
    """The single-valued references of ``table`` outside ``key`` to a table of names and
    nothing else (``references``: :func:`.misplaced.name_references`,
    ``companies.commission_name``): what a row belongs to. A reference to a table with more
    to say (a city with a population) is an attribute the model may misread, no mark of
    another entity."""
    return [r.column for r in references.get(table.name, [])
            if r.column not in key and table.column(r.column).single_valued]


def _contradict(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Two rows name different entities in some reference both hold."""
    return any(x and y and x != y for x, y in zip(a, b))


def entity_groups(schema: Schema, table: Table, key: Sequence[str], rows: Sequence[Row],
                  aliases: Mapping[str, str] | None = None,
                  references: Mapping[str, list] | None = None,
                  ) -> list[tuple[tuple[str, ...], list[int]]]:
    """``rows`` (one key's) split into entities (module docstring): per group, the
    entities it names (empty for the one group of rows that name at most one) and the
    indices of its rows in ``rows``. ``references``: :func:`.misplaced.name_references` of
    ``schema``, when read once for many calls."""
    refs = belonging(table, key, name_references(schema) if references is None
                     else references)
    named = [tuple(normalize_entity(r.values.get(c), aliases) for c in refs) for r in rows]
    if not any(_contradict(a, b) for a, b in combinations(set(named), 2)):
        return [((), list(range(len(rows))))]
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, n in enumerate(named):
        if any(n):
            groups.setdefault(n, []).append(i)
    # a row naming no entity is the one most rows name, when one is named most often
    sizes = sorted((len(v) for v in groups.values()), reverse=True)
    if sizes and (len(sizes) == 1 or sizes[0] > sizes[1]):
        most = max(groups, key=lambda g: len(groups[g]))
        groups[most] = sorted([*groups[most], *(i for i, n in enumerate(named) if not any(n))])
    return sorted(groups.items())


__all__ = ["belonging", "entity_groups"]
