"""A row's own name copied into another of its columns, emptied (an extraction repair).

Asked for a company's chief executive where its chunk names none, the 1.5B measuring model
wrote the company's own name (``chief_executive = 'Bridarndou Holdings'`` for Bridarndou
Holdings; ``'Dixvhukrand'`` for Dixvhukrand), and a Set2 query answered with it. A text cell
equal to the row's entity name (its TEXT key columns, compared as :func:`.normalize_entity`
compares names) in a column that is not another name for it (``short_name``, ``brand``,
``alias``, ``ticker``, ...) or a place that may share it (a city-state's ``country``) is
emptied, with a correction (``reason="self-copy"``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from quaderno.methods.docsage.normalize import key_columns, normalize_entity
from quaderno.methods.docsage.rows import Correction
from quaderno.methods.docsage.schema import Table

# a column whose name says it holds another name of the row's entity, or a place that may
# share it (Singapore is a city of the country Singapore)
_OTHER_NAME = re.compile(r"name|alias|brand|title|label|abbrev|acronym|ticker|known|code|"
                         r"short|spelling|official|country|nation|state|capital|city|"
                         r"region|province|place", re.I)


def self_copies(table: Table, values: Mapping[str, Any]) -> tuple[dict[str, Any],
                                                                   list[Correction]]:
    """``values`` with every text cell that repeats the row's own name emptied, and a
    correction per cell."""
    keys = key_columns(table)
    own = {normalize_entity(values.get(k)) for k in keys
           if table.column(k).type == "TEXT"} - {""}
    out, changes = dict(values), []
    if not own:
        return out, changes
    for col in table.columns:
        value = values.get(col.name)
        if col.name in keys or col.type != "TEXT" or _OTHER_NAME.search(col.name) \
                or not isinstance(value, str) or normalize_entity(value) not in own:
            continue
        out[col.name] = None
        changes.append(Correction(column=col.name, old=value, new=None, reason="self-copy",
                                  by="as-stated"))
    return out, changes


__all__ = ["self_copies"]
