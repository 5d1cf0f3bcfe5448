"""CLEAR base extraction: 0..n tuples per table from each chunk, with provenance (spec §3.1).

Each chunk is read by :func:`.chunk_extract.extract_chunk`: one typed step asking for every
table the store does not already hold for that chunk, a confidence per value, and numbers at
the scale the chunk writes them (:func:`.chunk_extract.read_values`).

Extracted rows go through an optional :class:`~quaderno.methods.docsage.store.TupleStore`,
so a chunk is extracted once per (table definition, model, settings); a table whose columns
are partly stored under other definitions is extracted for its new columns only. The store
holds rows as the model wrote them; how they are read (numbers' scale, a name in a person's
column, the repairs of :func:`extract`'s ``read``) is applied on every read, so a better
reader re-uses what was stored instead of paying for the extraction again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from quaderno.corpus.chunk import Chunk
from quaderno.errors import ConfigError, StepError
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.docsage.chunk_extract import extract_chunk, failed_calls, read_values
from quaderno.methods.docsage.ended import ended_links, ended_members, ended_references
from quaderno.methods.docsage.extract_call import (ExtractionSettings, extraction_model,
                                                   extraction_schema_text, extraction_step,
                                                   prompt_fingerprint, row_model)
from quaderno.methods.docsage.group_keyed import named_for_subject
from quaderno.methods.docsage.lists import split_lists
from quaderno.methods.docsage.misplaced import all_back_links, misplaced
from quaderno.methods.docsage.normalize import key_columns
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.store import delta_table, join_rows
from quaderno.methods.docsage.unstated import unstated

log = logging.getLogger(__name__)


def _as_read(rows: Sequence[Row], table: Table, text: str) -> list[Row]:
    """Rows as the model wrote them (the store's), read (:func:`.chunk_extract.read_values`)."""
    out = []
    for row in rows:
        values, changes = read_values(table, row.values, text)
        provenance = row.provenance.model_copy(
            update={"corrections": [*row.provenance.corrections, *changes]})
        out.append(row.model_copy(update={"values": values, "provenance": provenance}))
    return out


class ChunkResult(BaseModel):
    """What one chunk yielded: rows per table name, LLM calls made, store hits."""

    chunk_id: str
    rows: dict[str, list[Row]] = Field(default_factory=dict)
    calls: int = 0
    hits: int = 0
    misses: int = 0
    # rows its own calls read (re-reads included), as the model wrote them: not those the
    # store held
    fresh: int = 0
    failed: bool = False
    # link rows the text says have ended (ended.ended_links), and members it says have left
    # a body whose table holds them (ended.ended_members), left out of ``rows``
    ended: list[Row] = Field(default_factory=list)


#: the seed of a sampled re-read's first call: above every agreement sample's of a read
#: (1 to ``samples - 1``, at most 8), so that in ``samples`` confidence mode, or ``auto``
#: without log-probabilities, it does not repeat sample 1 of the read that found no row (it
#: was seed 1, and did); its own samples (2001-2008) clear the committee's (1000-1008),
#: which seed 10 (1001-1008) repeated (review 2 of 9a2ab7f)
REREAD_SEED = 20
#: how a table is read again alone, as the tuple store records a re-read that found no row
#: (:meth:`.TupleStore.reread_none`): a change to how a re-read is made needs a new tag, so
#: that what an older way found blocks no new one ("sampled/seed1/1" was the seed-1 re-read)
REREAD_TAGS = {"greedy": "greedy/1", "sampled": f"sampled/seed{REREAD_SEED}/1"}


def _expectations(expected: Mapping[str, str | Sequence[str]] | None,
                  ) -> dict[str, tuple[str, ...]]:
    """``expected`` (:func:`extract`) as chunk id -> table names, in order, once each;
    :class:`ConfigError` naming a value that is no table name or list of them. A name the
    schema has no table of is kept, and :func:`extract` reads nothing again for it."""
    out: dict[str, tuple[str, ...]] = {}
    for chunk_id, names in (expected or {}).items():
        if isinstance(names, str):
            names = (names,)
        if names is None:
            names = ()
        if not isinstance(names, (list, tuple)) or \
                not all(isinstance(n, str) for n in names):
            raise ConfigError(f"expected[{chunk_id!r}] must be a table name or a list of "
                              f"them, got {names!r}")
        out[chunk_id] = tuple(dict.fromkeys(names))
    return out


async def _read_again(lm: LM, chunk: Chunk, table: Table, settings: ExtractionSettings,
                      trace: Trace | None, *, sampled: bool,
                      ) -> tuple[list[Row], int, bool]:
    """One more read of ``table`` alone from a chunk expected to hold a row of it
    (:func:`extract`): its rows, the calls it made, and whether its reply was usable (an
    unusable one, or in ``samples`` confidence mode one with an unusable sample, is no
    reading of nothing, and is not recorded as one). ``sampled``: at the settings' sample
    temperature (greedy decoding would repeat the read that found no row), else greedy (a
    new prompt when the read that found none asked for other tables or some columns too,
    and the first try for a stored reading, whose prompt is not known). Sampled, its seed is
    :data:`REREAD_SEED`, which no agreement sample of a read uses."""
    how = "sampled" if sampled else "greedy"
    failures: list[str] = []
    try:
        rows, calls = await extract_chunk(
            lm, chunk, [table], settings, trace=trace, output=extraction_model([table]),
            temperature=settings.sample_temperature if sampled else 0.0,
            seed=REREAD_SEED if sampled else None, as_written=True, failures=failures)
    except StepError as exc:
        if trace is not None:
            trace.fallback(f"docsage.extract: chunk {chunk.id} read as no row of {table.name}, "
                           f"and its re-read of that table alone ({how}) was unusable ({exc})")
        return [], failed_calls(exc), False
    got = rows.get(table.name, [])
    if trace is not None:
        trace.fallback(f"docsage.extract: chunk {chunk.id}, found for an entity of "
                       f"{table.name}, read as no row of it; read once more, {table.name} "
                       f"alone, {how}: {len(got)} row(s)")
    return got, calls, not failures


async def extract(lm: LM, chunks: Sequence[Chunk], schema: Schema,
                  settings: ExtractionSettings | None = None, *, store: Any = None,
                  trace: Trace | None = None, concurrency: int = 2,
                  expected: Mapping[str, str | Sequence[str]] | None = None,
                  ) -> list[ChunkResult]:
    """Extract every table of ``schema`` from every chunk, at most ``concurrency`` chunks
    at a time, through ``store`` (a :class:`TupleStore`) when given: a (chunk, table) the
    store holds costs no call; new results are stored as soon as a chunk is done, so an
    interrupted run loses at most the chunks in flight. A chunk whose reply is unusable
    yields no rows (a recorded fallback) and is not stored. ``expected``: chunk id -> the
    tables the entity a search naming it found the chunk for misses cells of (a table name
    or a list of them); when such a chunk holds no row of one of them, read now or stored
    so by an earlier read, that table alone is read again (a recorded fallback), and the
    rows are kept and stored as the chunk's reading of it. The re-read is one
    greedy read when the read that found no row, made now, asked for other tables too (or
    for some columns only), and one sampled read when it asked for this whole table alone
    (greedy decoding repeats a prompt's reply); a reading found stored is re-read greedy
    and then, finding none, sampled (the store does not keep what else the stored read
    asked for: a question whose schema was this table alone makes the greedy prompt the
    stored read's own). So an expected chunk costs up to two more reads per table it is
    expected in (each of ``samples`` calls in that confidence mode), beyond the budgets,
    which count chunks. With a store, a re-read that finds nothing, and a read of a whole
    table alone that finds nothing, are recorded (:meth:`.TupleStore.reread_none`, tagged
    by :data:`REREAD_TAGS`) and not made again for that entry: the measuring model read
    "Tallies of offices put Bryskound Holdings at 123" as no row (``grid-docsage-set2``),
    and with the commission's table beside it read "Bryskound Holdings operates in energy"
    as no company and the commission's name, which that document never writes
    (``s7-docsage-set2``); asked for ``companies`` alone it read both."""
    settings = settings or ExtractionSettings()
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    expects = _expectations(expected)
    gate = asyncio.Semaphore(concurrency)
    models: dict[tuple[str, ...], type[BaseModel]] = {}   # one output model per table set

    def model_for(tables: Sequence[Table]) -> type[BaseModel]:
        names = tuple(t.name for t in tables)
        if names not in models:
            models[names] = extraction_model(tables)
        return models[names]

    def keep(chunk: Chunk, table: Table, rows: Sequence[Row]) -> None:
        # stored as written, with the columns they fill once read (store.known_tables)
        filled = {c for r in rows for c, v in read_values(table, r.values, chunk.text)[0].items()
                  if v is not None}
        store.put(chunk, table, lm.model_id, settings, rows,
                  filled=[c for c in table.column_names if c in filled])

    async def one(chunk: Chunk) -> ChunkResult:
        result = ChunkResult(chunk_id=chunk.id)
        missing: list[Table] = []
        # table name -> (the full table, rows assembled for its stored columns)
        partial: dict[str, tuple[Table, list[Row]]] = {}
        for t in schema.tables:
            cached = store.get(chunk, t, lm.model_id, settings) if store is not None else None
            if cached is not None:
                result.rows[t.name] = cached
                result.hits += 1
                continue
            cover = store.cover(chunk, t, lm.model_id, settings) if store is not None else None
            if cover is not None and not cover[1]:        # every column stored elsewhere
                result.rows[t.name] = cover[0]
                result.hits += 1
                keep(chunk, t, cover[0])
                continue
            result.misses += store is not None
            if cover is not None:                         # extract only the new columns
                partial[t.name] = (t, cover[0])
                missing.append(delta_table(t, cover[1]))
            else:
                missing.append(t)
        failures: list[str] = []           # agreement samples whose reply was unusable
        if missing:
            async with gate:
                try:
                    output = model_for(missing)
                    rows, result.calls = await extract_chunk(lm, chunk, missing, settings,
                                                             trace=trace, output=output,
                                                             as_written=True,
                                                             failures=failures)
                except StepError as exc:
                    result.calls += failed_calls(exc)
                    result.failed = True
                    if trace is not None:
                        trace.fallback(f"docsage.extract: chunk {chunk.id} skipped ({exc})")
                    log.info("extraction of chunk %s failed: %s", chunk.id, exc)
                    return result
            for t in missing:
                result.rows[t.name] = rows.get(t.name, [])
                result.fresh += len(result.rows[t.name])
                if store is not None:
                    keep(chunk, t, result.rows[t.name])
                    if len(missing) == 1 and not partial and not result.rows[t.name] \
                            and not failures:
                        # the whole table alone, greedy: the greedy re-read's own prompt
                        store.reread_none(chunk, t, lm.model_id, settings,
                                          REREAD_TAGS["greedy"])
                if t.name in partial:
                    full, have = partial[t.name]
                    new_cols = set(t.column_names) - set(key_columns(t))
                    result.rows[t.name] = join_rows(
                        full, [(have, set(full.column_names) - new_cols),
                               (result.rows[t.name], new_cols)])
                    keep(chunk, full, result.rows[t.name])
        # a chunk found for an entity of a table, with no row of it (read now, or stored so
        # by a read that expected none): that table alone, again
        expected_tables = (schema.table(n) for n in expects.get(chunk.id, ()))
        for owed in (t for t in expected_tables if t is not None):
            if result.rows.get(owed.name):
                continue
            # the ways of reading this table alone that have already found nothing
            done = store.rereads_none(chunk, owed, lm.model_id, settings) \
                if store is not None else set()
            if owed.name in {t.name for t in missing}:
                # read just now: greedy is a new prompt unless that read asked for this
                # whole table alone (then it was the greedy read: recorded above)
                alone = len(missing) == 1 and owed.name not in partial
                tries = ["sampled" if alone else "greedy"]
            else:
                # stored by a read whose other tables are not known (a question's schema
                # with another table, or of this table alone, which makes the greedy prompt
                # the stored read's own): greedy, then sampled
                tries = ["greedy", "sampled"]
            for how in (h for h in tries if REREAD_TAGS[h] not in done):
                async with gate:
                    again, calls, usable = await _read_again(
                        lm, chunk, owed, settings, trace, sampled=how == "sampled")
                result.calls += calls
                if again:
                    result.rows[owed.name] = again
                    result.fresh += len(again)
                    if store is not None:
                        keep(chunk, owed, again)
                    break
                if usable and store is not None:
                    store.reread_none(chunk, owed, lm.model_id, settings, REREAD_TAGS[how])
        return result

    async def read(chunk: Chunk) -> ChunkResult:
        # stored rows are as the model wrote them; how they are read (numbers' scale, names
        # in the wrong column, what the text says has ended) is applied on every read, so
        # the store needs no new key when the reading improves
        result = await one(chunk)
        for name, rows in result.rows.items():
            table = schema.table(name)
            if table is not None:
                rows = _as_read(rows, table, chunk.text)
                # a roster written into one cell is a row per name first (lists.py)
                rows = split_lists(table, rows, chunk.render(),
                                   [c for c, _ in all_back_links(schema, name)])
                # a member's row keyed by its group's name is the chunk subject's
                rows = named_for_subject(table, rows, chunk.title, chunk.text)
                rows, ended = ended_links(table, ended_references(table, rows, chunk.text),
                                          chunk.text)
                # a roster's title names its group ("Stedrurial Medal — members, part 1")
                rows, left = ended_members(table, rows, chunk.render())
                result.rows[name] = rows
                result.ended += [*ended, *left]
        # a referenced entity's name written into another column (misplaced.py), and values
        # the chunk as the model saw it (its title too) does not state (unstated.py)
        result.rows = unstated(schema, misplaced(schema, result.rows), chunk.id,
                               chunk.render())
        return result

    if trace is not None:
        with trace.span("docsage.extract", chunks=len(chunks),
                        tables=[t.name for t in schema.tables]) as span:
            results = await asyncio.gather(*(read(c) for c in chunks))
            span.outputs = {"calls": sum(r.calls for r in results),
                            "store_hits": sum(r.hits for r in results),
                            "tuples": sum(len(v) for r in results for v in r.rows.values()),
                            "links_ended": sum(len(r.ended) for r in results)}
        return list(results)
    return list(await asyncio.gather(*(read(c) for c in chunks)))


def all_rows(results: Sequence[ChunkResult]) -> list[Row]:
    """The rows of every chunk, in chunk order then table order."""
    return [row for r in results for rows in r.rows.values() for row in rows]


__all__ = ["ChunkResult", "ExtractionSettings", "REREAD_SEED", "REREAD_TAGS", "all_rows",
           "extract", "extraction_model", "extraction_schema_text", "extraction_step",
           "prompt_fingerprint", "row_model"]
