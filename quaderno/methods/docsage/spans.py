"""Where a chunk states an extracted value: its written forms, whole-word matches, a row's
evidence span.

A row's provenance keeps the character span of its evidence (:func:`locate_span`), and
other modules ask whether a text states a value at all (:func:`mentions`: alias merging,
the uncertainty signals, re-keying). A number is matched as written ("1,234" or "1234"),
never inside a larger one; a date by its ISO form or its year.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from quaderno.methods.docsage.normalize import key_columns
from quaderno.methods.docsage.rows import coerce
from quaderno.methods.docsage.schema import Table


def surface_forms(value: Any, col_type: str) -> list[str]:
    """Ways a value may be written in text, most specific first."""
    if value is None or isinstance(value, bool):
        return []
    forms = [str(value).strip()]
    typed, ok = coerce(value, col_type)
    if ok and isinstance(typed, (int, float)) and not isinstance(typed, bool):
        if float(typed).is_integer():
            n = int(typed)
            forms += [f"{n:,}", str(n)]
        else:
            forms += [f"{typed:g}", f"{typed:,g}"]
    if ok and col_type == "DATE" and typed is not None:
        forms += [typed.isoformat(), str(typed.year)]
    return [f for f in dict.fromkeys(forms) if len(f) >= 1]


def _occurrences(text: str, forms: Sequence[str],
                 number: bool = False) -> list[tuple[int, int]]:
    """Where ``text`` writes one of ``forms`` as whole words (the first form found); a
    ``number`` also not inside a larger one (the 1 of "1,234.5" or "1.5")."""
    low = text.casefold()
    for form in forms:
        pattern = re.escape(form.casefold())
        if form[:1].isalnum():
            pattern = (r"(?<!\d[.,])" if number else "") + r"(?<!\w)" + pattern
        if form[-1:].isalnum():
            pattern += r"(?!\w)" + (r"(?![.,]\d)" if number else "")
        found = [(m.start(), m.end()) for m in re.finditer(pattern, low)]
        if found:
            return found
    return []


def mentions(text: str, value: Any, col_type: str) -> bool:
    """True when ``text`` states ``value`` in one of its :func:`surface_forms` (as a whole
    word: the id 1 is not in "1991", nor a number's in "1,234.5"), whitespace runs and line
    breaks read as one space."""
    forms = [" ".join(f.split()) for f in surface_forms(value, col_type)]
    return bool(_occurrences(" ".join(text.split()), [f for f in forms if f],
                             number=col_type in ("INT", "DOUBLE")))


def locate_span(text: str, table: Table, values: dict[str, Any]) -> tuple[int, int] | None:
    """The character span of a row's evidence in ``text``: from the entity name (the key
    columns) to the values found nearest to it; None when no value can be found."""
    anchor: tuple[int, int] | None = None
    found: list[tuple[int, int]] = []
    for name in key_columns(table):
        occ = _occurrences(text, surface_forms(values.get(name), table.column(name).type))
        if occ:
            anchor = anchor or occ[0]
            found.append(occ[0])
    keys = set(key_columns(table))
    for col in table.columns:
        if col.name in keys:
            continue
        occ = _occurrences(text, surface_forms(values.get(col.name), col.type))
        if not occ:
            continue
        if anchor is None:
            anchor = occ[0]
        found.append(min(occ, key=lambda o, a=anchor: abs(o[0] - a[0])))
    if not found:
        return None
    return min(s for s, _ in found), max(e for _, e in found)


__all__ = ["locate_span", "mentions", "surface_forms"]
