"""Rows of one key that name different entities they belong to: namesakes, not a conflict.

The benchmark plants a namesake beside a member: "Kryslias Systems is a company of the Sopael
Markets Commission" (320 employees, 161 offices) beside the Drournlia Markets Commission's
Kryslias Systems (137,890 employees, 143 offices). Keyed by ``company_name``, the two rows
break the key's dependencies, and CLEAR's backtracking wrote one judged value into every row
of the violation: the Drournlia member could take the namesake's 320 employees, and the
question "the company with the fewest employees in the Drournlia Markets Commission" would
name it. The merge already keeps such rows apart (:func:`.aliases.merge_entities` merges
only rows that do not contradict each other); the conflict step now does too.

A key's rows are split by the single-valued references they hold beside the key (a
company's ``commission_name``): when two of them name different entities, each entity's
rows are settled among themselves, and a row naming none is left out, for it cannot be told
whose it is. With one entity named, or none, the rows are one group, as before. The
reference column itself is then never a conflict between namesakes: each keeps its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

from quaderno.methods.docsage.normalize import normalize_entity
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Table


def _references(table: Table, key: Sequence[str]) -> list[str]:
    """The single-column, single-valued references of ``table`` outside ``key``."""
    return [fk.cols[0] for fk in table.foreign_keys
            if len(fk.cols) == 1 and fk.cols[0] not in key
            and table.column(fk.cols[0]).single_valued]


def _contradict(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Two rows name different entities in some reference both hold."""
    return any(x and y and x != y for x, y in zip(a, b))


def entity_groups(table: Table, key: Sequence[str], rows: Sequence[Row],
                  aliases: Mapping[str, str] | None = None) -> list[tuple[tuple[str, ...],
                                                                        list[int]]]:
    """``rows`` (one key's) split into entities (module docstring): per group, the
    entities it names (empty for the one group of rows that name at most one) and the
    indices of its rows in ``rows``."""
    refs = _references(table, key)
    named = [tuple(normalize_entity(r.values.get(c), aliases) for c in refs) for r in rows]
    if not any(_contradict(a, b) for a, b in combinations(set(named), 2)):
        return [((), list(range(len(rows))))]
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, n in enumerate(named):
        if all(n):
            groups.setdefault(n, []).append(i)
    return sorted(groups.items())


__all__ = ["entity_groups"]
