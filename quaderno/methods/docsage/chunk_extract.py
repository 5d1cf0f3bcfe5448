"""One chunk's extraction: 0..n tuples per table, with provenance (spec §3.1).

One typed :class:`~quaderno.llm.steps.Step` per chunk asks for every table it is given; its
output model is built per table set with ``pydantic.create_model`` so the backend can
constrain decoding to the JSON schema (all keys present, ``null`` allowed, typed; the call's
declaration is :mod:`.extract_call`). Replies that only mean "missing" ("None", "N/A", "not
mentioned") become NULL. Each row gets the character span of its evidence in the chunk where
the values can be found in the text (:mod:`.spans`), the extracting model, and a confidence
per value (:mod:`confidence`: token log-probabilities, or agreement across samples). The
model copies numbers' digits; their scale ("billion", "M") is read from the chunk by
:mod:`amounts` (:func:`read_values`). Reading many chunks through the tuple store, and
reading a table again where a row was expected, is :mod:`.extract`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from quaderno.corpus.chunk import Chunk
from quaderno.errors import StepError
from quaderno.llm.lm import LM
from quaderno.llm.steps import Step, StepResult
from quaderno.llm.trace import Trace
from quaderno.methods.docsage.amounts import read_row
from quaderno.methods.docsage.confidence import agreement_rows, logprob_confidences
from quaderno.methods.docsage.copies import self_copies
from quaderno.methods.docsage.extract_call import (ExtractionSettings, extraction_model,
                                                   extraction_schema_text, extraction_step)
from quaderno.methods.docsage.normalize import is_null
from quaderno.methods.docsage.rows import Correction, Provenance, Row
from quaderno.methods.docsage.schema import Table
from quaderno.methods.docsage.spans import locate_span


def doc_id_of(chunk: Chunk) -> str:
    """The document a chunk belongs to: ``meta['doc_id']`` or the ``parent_id`` the chunker
    records, else the id before '#'."""
    doc = chunk.meta.get("doc_id") or chunk.meta.get("parent_id")
    if doc:
        return str(doc)
    return chunk.id.rpartition("#")[0] or chunk.source or chunk.id


def read_values(table: Table, values: dict[str, Any],
                text: str) -> tuple[dict[str, Any], list[Correction]]:
    """One row's values as the chunk ``text`` states them, and the corrections that made
    them so: numbers with the scale the text writes, in their column's unit (amounts.py);
    the row's own name, or a body's, emptied in a column for a person (copies.py)."""
    read, changes = read_row(table, values, text)
    read, copied = self_copies(table, read)
    return read, changes + copied


def clean_values(table: Table, values: dict[str, Any]) -> dict[str, Any]:
    """The table's columns only; null words ("None", "N/A") as None, strings stripped."""
    out = {}
    for col in table.columns:
        v = values.get(col.name)
        out[col.name] = None if is_null(v) else (v.strip() if isinstance(v, str) else v)
    return out


def _indexed_rows(result_value: BaseModel, tables: Sequence[Table],
                  ) -> dict[str, list[tuple[int, dict]]]:
    """Rows per table with their position in the raw reply (what token log-probabilities
    are keyed by); objects whose values are all null are dropped."""
    out = {}
    for t in tables:
        items = getattr(result_value, t.name, None) or []
        rows = [(i, clean_values(t, item.model_dump())) for i, item in enumerate(items)]
        out[t.name] = [(i, r) for i, r in rows if any(v is not None for v in r.values())]
    return out


def _rows_from(result_value: BaseModel, tables: Sequence[Table]) -> dict[str, list[dict]]:
    return {name: [r for _, r in rows]
            for name, rows in _indexed_rows(result_value, tables).items()}


def _lookup(conf: dict[tuple, float], table: str, i: int, col: str) -> float | None:
    for path in ((table, i, col),):
        if path in conf:
            return conf[path]
    low = {tuple(p.lower() if isinstance(p, str) else p for p in k): v for k, v in conf.items()}
    return low.get((table.lower(), i, col.lower()))


def failed_calls(exc: StepError) -> int:
    """The LLM calls a failed step made: the attempts it reports (a reply and its repair
    re-ask), else one."""
    return exc.attempts if exc.attempts is not None else 1


_QUOTES = re.compile(r'"{3,}')


def quoted(text: str) -> str:
    """``text`` safe between the extraction prompt's triple quotes: a run of three or more
    ``"`` in a document is spaced apart (``" " "``), so it cannot end the text and open
    instructions after it. Any other text is left as it is (so is every prompt the LLM
    cache and the tuple store hold)."""
    return _QUOTES.sub(lambda m: " ".join(m[0]), text)


async def _sample(step: Step, lm: LM, chunk: Chunk, schema_text: str,
                  trace: Trace | None) -> StepResult:
    return await step.run(lm, trace=trace, schema=schema_text, doc=quoted(doc_id_of(chunk)),
                          text=quoted(chunk.render()))


async def extract_chunk(lm: LM, chunk: Chunk, tables: Sequence[Table],
                        settings: ExtractionSettings, *, trace: Trace | None = None,
                        temperature: float = 0.0, seed: int | None = None,
                        with_confidence: bool = True, output: type[BaseModel] | None = None,
                        as_written: bool = False, failures: list[str] | None = None,
                        ) -> tuple[dict[str, list[Row]], int]:
    """Extract ``tables`` from one chunk: (rows per table name, LLM calls made). Raises
    :class:`StepError` when the model gives no usable reply. ``output``: the tables'
    :func:`extraction_model`, to build it once for many chunks. ``as_written``: the values
    as the model wrote them, not yet read (:func:`read_values`), as the store keeps them.
    ``failures``: appended with each agreement sample whose reply was unusable (it votes
    "absent")."""
    if not tables:
        return {}, 0
    output = output or extraction_model(tables)
    schema_text = extraction_schema_text(tables)
    mode = settings.confidence if with_confidence else "none"
    first = await _sample(extraction_step(tables, settings, temperature=temperature, seed=seed,
                                          logprobs=mode in ("auto", "logprobs"), output=output),
                          lm, chunk, schema_text, trace)
    calls = first.attempts
    indexed = _indexed_rows(first.value, tables)
    raw_rows = {name: [r for _, r in rows] for name, rows in indexed.items()}
    conf_by_table: dict[str, list[dict[str, float]]] = {t.name: [{} for _ in raw_rows[t.name]]
                                                         for t in tables}
    use_samples = mode == "samples"
    kind = "logprobs"
    if mode in ("auto", "logprobs"):
        conf = logprob_confidences(first.raw, first.logprobs or [])
        if not conf and any(raw_rows.values()):
            if trace is not None:
                trace.fallback(f"docsage.extract: no token log-probabilities for chunk "
                               f"{chunk.id}" + ("; sample agreement instead"
                                                if mode == "auto" else ""))
            use_samples = mode == "auto"
        for t in tables:
            # look up by the row's position in the raw reply: dropped all-null objects
            # still hold their place there
            for k, (i, _) in enumerate(indexed[t.name]):
                for col in t.column_names:
                    p = _lookup(conf, t.name, i, col)
                    if p is not None:
                        conf_by_table[t.name][k][col] = p
    if use_samples:
        kind = "samples"
        samples = [raw_rows]
        for s in range(1, settings.samples):
            step = extraction_step(tables, settings, temperature=settings.sample_temperature,
                                   seed=s if seed is None else seed * 100 + s,
                                   output=output)
            try:
                res = await _sample(step, lm, chunk, schema_text, trace)
            except StepError as exc:
                calls += failed_calls(exc)
                if trace is not None:
                    trace.fallback(f"docsage.extract: sample {s} of chunk {chunk.id} "
                                   f"unusable ({exc}); it votes 'absent'")
                if failures is not None:
                    failures.append(f"sample {s}: {exc}")
                samples.append({t.name: [] for t in tables})
                continue
            calls += res.attempts
            samples.append(_rows_from(res.value, tables))
        for t in tables:
            agreed = agreement_rows([s[t.name] for s in samples], t)
            raw_rows[t.name] = [a.values for a in agreed]
            conf_by_table[t.name] = [a.confidence for a in agreed]
    out: dict[str, list[Row]] = {}
    for t in tables:
        rows = []
        for values, conf in zip(raw_rows[t.name], conf_by_table[t.name]):
            # offsets into chunk.text; (0, 0) when no value can be found in it
            start, end = locate_span(chunk.text, t, values) or (0, 0)
            read, changes = (values, []) if as_written else \
                read_values(t, values, chunk.text)
            rows.append(Row(table=t.name, values=read, provenance=Provenance(
                doc_id=doc_id_of(chunk), chunk_id=chunk.id, char_start=start, char_end=end,
                extractor=lm.model_id, confidence=conf,
                confidence_kind={c: kind for c in conf}, corrections=changes)))
        out[t.name] = rows
    return out, calls


__all__ = ["clean_values", "doc_id_of", "extract_chunk", "failed_calls", "quoted",
           "read_values"]
