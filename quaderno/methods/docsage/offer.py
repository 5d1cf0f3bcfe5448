"""The known tables ASK offers the schema draft: those the tuple store holds whose names
share a word with the question, described as the prompt shows them (extraction is paid once,
issue 11 item 5: a draft that keeps an offered table re-uses its stored tuples,
:mod:`.adopt`)."""

from __future__ import annotations

from collections.abc import Sequence

from quaderno.methods.docsage.schema import Column, Table, generic_schema
from quaderno.methods.docsage.terms import content_words, overlap


def describe_table(t: Table) -> str:
    """A table as the schema prompt offers it: name, typed columns, description."""
    def col(c: Column) -> str:
        return f"{c.name} {c.type}" + ("" if c.single_valued else " multi-valued")
    return f"{t.name}({', '.join(col(c) for c in t.columns)})" + (
        f" -- {t.description}" if t.description else "")


def describe_tables(tables: Sequence[Table]) -> str:
    return "\n".join(f"- {describe_table(t)}" for t in tables) or "(none)"


def relevant_tables(tables: Sequence[Table], question: str, limit: int = 8) -> list[Table]:
    """The known tables worth offering for ``question``: those whose name or a column's name
    shares a content word with it (:func:`.terms.overlap`), in the order given, at most
    ``limit``, and of a name only its first definition (the store gives the one most chunks
    hold first); never the generic ``facts`` table of the ablation. A table about other
    entities would only be copied into the schema: the measuring model copied ``facts``,
    and every extraction call wrote entity-attribute-value rows the question did not need.
    Two definitions of one name (ASK's rounds add a key or a column) were both offered, and
    the draft's table matched neither (``benchmarks/docsage_reuse.py``, 2026-11-29). A table
    the question names only by a synonym is not offered, and is extracted anew."""
    asked, generic = content_words(question), generic_schema().tables[0].signature()
    seen: set[str] = set()
    out = []
    for t in tables:
        if t.name.lower() in seen or t.signature() == generic or \
                not overlap(asked, content_words(" ".join([t.name, *t.column_names]))):
            continue
        seen.add(t.name.lower())
        out.append(t)
    return out[:limit]


__all__ = ["describe_table", "describe_tables", "relevant_tables"]
