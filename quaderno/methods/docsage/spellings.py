"""One value of a plain column written several ways, made one (CLEAR, before the merge).

A plain column is a TEXT column that is no key of any table, no reference and nothing a
reference points at (a ``sector``, a ``country``): the aliases and joins read those others,
and their spellings are :mod:`.aliases`' business. ``sector = 'energy'`` finds only the rows
written so, and the 1.5B measuring model wrote one Set2 company's sector "Energy" and
another's "energy sector" (``docsage-repairs-set2``, ``docsage-case-set2``):

* :func:`column_word`: a value that restates its column's name after what it holds ("energy
  sector" in ``sector``, "the Telecom Sector") becomes what it holds ("energy"), when another
  row of the column holds that value as it stands; a value nobody else writes bare is left
  (a ``type`` of "Type 2 diabetes" is not "Type 2", and "bridge club" in ``club`` keeps its
  word unless some row writes "bridge"), and so is a name ending in a capitalized column
  word ("Mexico City" in ``city``, "Orange County"), except in columns of kinds ("Energy
  Sector");
* :func:`same_case`: a value written in several cases ("Energy", "energy") becomes its most
  frequent spelling (on a tie, the lower-case one, else the first written), unless its case
  may carry meaning (codes, symbols, units: "CO" and "Co", "MW" and "mW").

Each rewrite is a correction on the row (``reason="column word"`` or ``"case"``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from quaderno.methods.docsage.normalize import key_columns
from quaderno.methods.docsage.rows import Correction, Row, noted
from quaderno.methods.docsage.schema import Schema

# a value whose case may carry meaning: a code, a symbol, a unit ("CO" and "Co", "MW" and
# "mW", "iOS"): short, or a capital after a small letter inside a word
_CASED = re.compile(r"[a-z][A-Z]")


def _plain_word(value: str) -> bool:
    return sum(ch.isalpha() for ch in value) >= 4 and not _CASED.search(value)


def plain_columns(schema: Schema) -> set[tuple[str, str]]:
    """(table, column) of every plain TEXT column (module docstring)."""
    fixed = {(t.name, k) for t in schema.tables for k in key_columns(t)}
    for t in schema.tables:
        for fk in t.foreign_keys:
            fixed |= {(t.name, c) for c in fk.cols} | {(fk.ref_table, c) for c in fk.ref_cols}
    return {(t.name, c.name) for t in schema.tables for c in t.columns
            if c.type == "TEXT" and (t.name, c.name) not in fixed}


def _rewritten(rows: Sequence[Row], new: dict[int, dict[str, str]], reason: str) -> list[Row]:
    """``rows`` with ``new`` values (row index -> column -> value), each a correction."""
    out = list(rows)
    for i, changes in new.items():
        r = out[i]
        out[i] = noted(r, [Correction(column=c, old=r.values.get(c), new=v, reason=reason,
                                      by="alias-merge") for c, v in changes.items()],
                       {**r.values, **changes})
    return out


# columns whose values are kinds of things, never names: a capitalized column word in them
# restates the column ("Energy Sector")
KINDS = frozenset({"sector", "industry", "field", "category", "type", "genre", "segment",
                   "domain", "sport", "discipline", "branch", "kind", "class"})


def _bare(value: str, column: str) -> str | None:
    """``value`` without its column's name written after it ("energy sector" in ``sector``
    -> "energy"; a leading "the" goes too), or None when it does not end so, the name is
    shorter than four letters, or fewer than three letters are left. A capitalized column
    word is part of a name ("Mexico City" in ``city``, "Orange County") unless the column
    holds kinds (:data:`KINDS`: "Energy Sector") or a "the" leads ("the Telecom Sector")."""
    word = column.rsplit("_", 1)[-1]
    if len(word) < 4:
        return None
    m = re.fullmatch(rf"(?i)(the\s+)?(.+?)[\s-]+({re.escape(word)}s?)\.?", value.strip())
    if m is None or (m.group(3)[0].isupper() and not m.group(1)
                     and word.casefold() not in KINDS):
        return None
    rest = m.group(2).strip(" ,;:-")
    return rest if sum(ch.isalpha() for ch in rest) >= 3 else None


def column_word(schema: Schema, rows: Sequence[Row]) -> list[Row]:
    """Rows with each plain value that restates its column's name rewritten to what it
    holds, where another row writes that bare (module docstring)."""
    plain = plain_columns(schema)
    held: set[tuple[str, str, str]] = set()
    for r in rows:
        for c, v in r.values.items():
            if (r.table, c) in plain and isinstance(v, str) and _bare(v, c) is None:
                held.add((r.table, c, v.strip().casefold()))
    new: dict[int, dict[str, str]] = {}
    for i, r in enumerate(rows):
        for c, v in r.values.items():
            rest = _bare(v, c) if (r.table, c) in plain and isinstance(v, str) else None
            if rest is not None and (r.table, c, rest.casefold()) in held:
                new.setdefault(i, {})[c] = rest
    return _rewritten(rows, new, "column word")


def same_case(schema: Schema, rows: Sequence[Row]) -> list[Row]:
    """Rows with each plain value written in several cases rewritten to its most frequent
    spelling (module docstring)."""
    plain = plain_columns(schema)
    spellings: dict[tuple[str, str, str], Counter[str]] = {}
    for r in rows:
        for c, v in r.values.items():
            if (r.table, c) in plain and isinstance(v, str) and _plain_word(v.strip()):
                spellings.setdefault((r.table, c, v.strip().casefold()),
                                     Counter())[v.strip()] += 1
    best = {k: max(c.items(), key=lambda kv: (kv[1], kv[0] == kv[0].lower()))[0]
            for k, c in spellings.items() if len(c) > 1}
    new: dict[int, dict[str, str]] = {}
    for i, r in enumerate(rows):
        for c, v in r.values.items():
            if isinstance(v, str) and \
                    (b := best.get((r.table, c, v.strip().casefold()), v.strip())) != v.strip():
                new.setdefault(i, {})[c] = b
    return _rewritten(rows, new, "case")


def plain_spellings(schema: Schema, rows: Sequence[Row]) -> list[Row]:
    """:func:`column_word`, then :func:`same_case`: what CLEAR runs before the merge."""
    return same_case(schema, column_word(schema, rows))


__all__ = ["column_word", "plain_columns", "plain_spellings", "same_case"]
