"""CLEAR end to end: extract → Level A → aliases → Level B → correct (spec §3, paper §3.2).

:func:`run_clear` is what the method calls once the schema is fixed:

1. extraction of every chunk through the tuple store (paid once per table definition);
2. **Level A** (``level_a``): values whose confidence is at or below the conformal threshold
   τ_low are flagged, and (``correction``) re-extracted by a committee that votes per cell;
3. entity aliases canonicalized, every row of a link some chunk says has ended left out
   (ended.py), and non-contradicting rows of one entity merged;
4. **Level B** (``level_b``): the schema's constraints as SQL over the staged rows; with
   ``correction``, conflicts (functional dependencies, duplicate keys) are settled by
   backtracking retrieval, range and order violations re-extracted and then NULLed, dangling
   foreign keys matched to the one parent they name; at most ``max_rounds`` rounds, Level B
   re-run after each. A conflict under an id key value none of its rows' chunks states (the
   model numbered every laureate 1) is left as it is: its rows are not one entity, and
   settling it would write one entity's values over the others' (``invented_keys`` in the
   report);
5. in a table with a row per value of a multi-valued column, an entity's one value of a
   single-valued column is written on each of its rows (entity_values.py).

Before Level A, a chunk's rows of an entity it says is not of a group the question names
are set apart (denied.py). The corrections' state and steps are :mod:`.corrector`'s; the
switches and the report, :mod:`.clear_settings`'.

The paper's ablation "w/o CLEAR (Logic Checking)" = ``level_b=False``; all of CLEAR off =
``level_a=False, level_b=False`` (extraction with its repairs, alias merging, and an
entity's one value shared among its rows: no confidence, no constraint, no correction).
Without a calibration, τ_low = ``default_tau`` (an uncalibrated [R] choice, recorded in the
report); calibrate with :func:`confidence.calibrate` on labelled cells (see
docs/docsage-clear.md).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from quaderno.corpus.chunk import Chunk
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.docsage.aliases import AliasGroup, canonicalize, merge_entities
from quaderno.methods.docsage.clear_settings import ClearConfig, ClearReport
from quaderno.methods.docsage.confidence import Calibration
from quaderno.methods.docsage.constraints import CheckResult, Violation, check
from quaderno.methods.docsage.correct import Retrieve
from quaderno.methods.docsage.corrector import Corrector, source_chunk
from quaderno.methods.docsage.denied import set_apart_denied
from quaderno.methods.docsage.ended import ended_by, without_ended_links
from quaderno.methods.docsage.entity_values import share_entity_values
from quaderno.methods.docsage.extract import ChunkResult, ExtractionSettings, all_rows, extract
from quaderno.methods.docsage.misplaced import misplaced_rows, other_kind_rows
from quaderno.methods.docsage.normalize import key_columns
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.spellings import plain_spellings

log = logging.getLogger(__name__)


def _ended_link(row: Row) -> dict[str, Any]:
    said = ended_by(row)
    return {"table": row.table, "values": row.values, "chunk_id": row.provenance.chunk_id,
            "quote": said.evidence_quote, "said_in": said.evidence_chunk or
            row.provenance.chunk_id}


class ClearResult(BaseModel):
    rows: list[Row]
    report: ClearReport
    violations: list[Violation] = Field(default_factory=list)   # left after correction
    alias_groups: list[AliasGroup] = Field(default_factory=list)


def episode_retriever(episode: Any) -> Retrieve:
    """Backtracking retrieval through an :class:`Episode` (traced, not cited as evidence)."""
    async def retrieve(query: str, k: int) -> Sequence[Any]:
        return await episode.retrieve(query, k, cite=False)
    return retrieve

def _level_a_flags(cal: Calibration, row: Row, column: str, config: ClearConfig,
                   report: ClearReport, trace: Trace) -> bool:
    """Whether Level A flags a cell. A calibration computed on another score kind or model
    is not compared with this confidence (two scales): the uncalibrated default threshold
    is used for it instead, and the refusal is recorded once per reason."""
    p = row.provenance
    why = cal.mismatch(p.confidence_kind.get(column), p.extractor)
    if why is None:
        return cal.flags(p.confidence.get(column))
    if why not in report.calibration_refused:
        report.calibration_refused.append(why)
        trace.fallback(f"docsage.clear: {why}; default tau_low={config.default_tau} for "
                       "those values instead")
        log.warning("Level A: %s; default threshold instead", why)
    return Calibration(tau_low=config.default_tau).flags(p.confidence.get(column))


def _checked(schema: Schema, rows: Sequence[Row], report: ClearReport,
             trace: Trace) -> CheckResult:
    """Level B's check, each skipped constraint recorded once in the report and the trace."""
    result = check(schema, rows)
    for note in result.skipped:
        if note not in report.constraints_skipped:
            report.constraints_skipped.append(note)
            trace.fallback(f"docsage.clear: {note}")
    return result


async def run_clear(lm: LM, schema: Schema, chunks: Sequence[Chunk], *,
                    config: ClearConfig | None = None,
                    settings: ExtractionSettings | None = None, store: Any = None,
                    calibration: Calibration | None = None, retrieve: Retrieve | None = None,
                    committee: LM | Sequence[LM] | None = None,
                    aliases: Mapping[str, str] | None = None,
                    trace: Trace | None = None,
                    extracted: Sequence[ChunkResult] = (), question: str = "") -> ClearResult:
    """Extract ``schema``'s tables from ``chunks`` and enforce CLEAR; see the module doc.
    ``store``: a :class:`TupleStore`; ``retrieve``: backtracking retrieval (e.g.
    :func:`episode_retriever`); ``committee``: a stronger LM, or several, for re-extraction;
    ``aliases``: normalized alias -> normalized canonical entity name; ``extracted``: what
    some of ``chunks`` already yielded for this schema (counted in the report as if
    extracted here, and not extracted again); ``question``: what the tables are for (a
    chunk's rows of an entity it says is not of a group the question names are set apart,
    :mod:`.denied`)."""
    config = config or ClearConfig()
    settings = settings or ExtractionSettings()
    trace = trace if trace is not None else Trace(label="clear")
    run = Corrector(lm, schema, chunks, config, settings, trace, committee, retrieve, aliases)
    report = run.report
    with trace.span("docsage.clear", chunks=len(chunks), level_a=config.level_a,
                    level_b=config.level_b, correction=config.correction) as top:
        done = {r.chunk_id: r for r in extracted}
        new = await extract(lm, [c for c in chunks if c.id not in done], schema, settings,
                            store=store, trace=trace, concurrency=config.concurrency)
        by_id = {**done, **{r.chunk_id: r for r in new}}
        results = [by_id[c.id] for c in chunks if c.id in by_id]
        report.tuples_extracted = len(all_rows(results))
        results, namesakes = set_apart_denied(schema, results, {c.id: c for c in chunks},
                                              question)
        for r in namesakes:
            said = r.provenance.corrections[-1]
            report.namesakes.append({"table": r.table, "values": r.values,
                                     "chunk_id": r.provenance.chunk_id,
                                     "quote": said.evidence_quote})
            trace.fallback(f"docsage.clear: left out a {r.table} row of {said.old!r} read from "
                           f"{r.provenance.chunk_id}, which says: {said.evidence_quote!r}")
        report.tuples_removed += len(namesakes)
        rows = all_rows(results)
        report.failed_chunks = sum(r.failed for r in results)
        ended = [r for res in results for r in res.ended]
        report.llm_calls_extract = sum(r.calls for r in results)
        report.cache_hits = sum(r.hits for r in results)
        report.tuples_new = sum(r.fresh for r in results)
        report.cache_misses = sum(r.misses for r in results)
        if config.level_a and settings.confidence == "none":
            trace.fallback("docsage.clear: Level A needs confidences; extraction settings "
                           "have confidence='none', so Level A is skipped")
        elif config.level_a:
            cal = calibration or Calibration(tau_low=config.default_tau,
                                             source="uncalibrated default")
            report.tau_low, report.calibration = cal.tau_low, cal.source
            with trace.span("docsage.clear.level_a", tau_low=cal.tau_low) as span:
                cells = {}
                for i, r in enumerate(rows):
                    table = schema.table(r.table)
                    flagged = [c for c in (table.column_names if table else [])
                               if _level_a_flags(cal, r, c, config, report, trace)]
                    if flagged:
                        cells[i] = flagged
                report.cells_flagged = sum(len(c) for c in cells.values())
                report.tuples_flagged = len(cells)
                if config.correction and cells:
                    rows = await run.committee(rows, cells, "low-confidence")
                span.outputs = {"cells_flagged": report.cells_flagged}
        # a name another chunk gives a referenced entity, written into another column
        # (misplaced.py: each chunk alone knew only its own)
        rows = misplaced_rows(schema, rows)
        # a row naming a referenced body as its own entity (the commission as a company),
        # or a body's name in a table of people (an institution as a laureate)
        rows, others = other_kind_rows(schema, rows)
        for r in others:
            what = f"{r.table}: {r.values.get(key_columns(schema.table(r.table))[0])}"
            if what not in report.other_kind:
                report.other_kind.append(what)
                trace.fallback(f"docsage.clear: left out the row of {what}, an entity of "
                               "another kind (a body the table refers to, or a body's name "
                               "in a table of people), not one of its entities")
        report.tuples_removed += len(others)
        # link rows a chunk says have ended are named as the others are, then every row of
        # the same link is left out, whichever chunk it was read from (ended.py)
        rows, groups = canonicalize(schema, [*rows, *ended], aliases, acronyms=config.acronyms)
        rows, ended = rows[:len(rows) - len(ended)], rows[len(rows) - len(ended):]
        rows, elsewhere = without_ended_links(schema, rows, ended)
        report.links_ended = [_ended_link(r) for r in [*ended, *elsewhere]]
        for g in groups:
            run.spellings.setdefault(g.canonical, []).extend(
                x for x in g.spellings if x != g.canonical)
        rows = merge_entities(schema, plain_spellings(schema, rows), aliases, run.texts)
        report.alias_groups = len(groups)
        remaining: list[Violation] = []
        if config.level_b:
            with trace.span("docsage.clear.level_b") as span:
                result = _checked(schema, rows, report, trace)
                report.violations_initial = result.counts()
                while (config.correction and result.violations
                       and report.rounds < config.max_rounds):
                    report.rounds += 1
                    rows = merge_entities(schema, await run.fix(rows, result), aliases,
                                          run.texts)
                    result = _checked(schema, rows, report, trace)
                report.violations_final = result.counts()
                remaining = result.violations
                span.outputs = {"initial": report.violations_initial,
                                "final": report.violations_final, "rounds": report.rounds}
        # an entity's one value of a column on each of its rows of a table with a row per
        # value (entity_values.py): after Level B, which may settle two values into one
        # (without it, two values stay two and neither is shared)
        rows, shared = share_entity_values(schema, rows, aliases)
        if shared:
            run._count("entity-value", shared)
        report.tuples_final = len(rows)
        top.outputs = report.model_dump(exclude={"violations_initial", "violations_final"})
    log.info("CLEAR: %d tuples from %d chunks, %d flagged cells, violations %s -> %s",
             report.tuples_final, report.chunks, report.cells_flagged,
             report.violations_initial, report.violations_final)
    return ClearResult(rows=rows, report=report, violations=remaining, alias_groups=groups)


__all__ = ["ClearConfig", "ClearReport", "ClearResult", "episode_retriever", "run_clear",
           "source_chunk"]
