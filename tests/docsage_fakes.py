"""What scripted DocSage test models share: the synthesis reply that reads the query result's
first row, as a model answering only from the result would."""

from __future__ import annotations

import json
import re

SYNTHESIS_PROMPT = "Answer the question from the query result"


def first_row_answer(prompt: str) -> str:
    """The synthesis step's reply: the first quoted value of result row [1], cited; "not
    found" when the result has no row."""
    first = re.search(r"\[1\] \"([^\"]+)\"", prompt)
    return json.dumps({"answer": first[1] if first else "not found",
                       "cited_rows": [1] if first else []})
