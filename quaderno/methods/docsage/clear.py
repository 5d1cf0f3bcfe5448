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
from quaderno.methods.docsage.aliases import (AliasGroup, canonicalize, merge_entities,
                                              stated_in, unstated_ids)
from quaderno.methods.docsage.anomalies import match_parent
from quaderno.methods.docsage.confidence import Calibration
from quaderno.methods.docsage.constraints import CheckResult, Violation, check
from quaderno.methods.docsage.correct import (Retrieve, VoteRule, apply_cell,
                                              committee_ballots, resolve_conflict, tally)
from quaderno.methods.docsage.denied import set_apart_denied
from quaderno.methods.docsage.ended import ended_by, ended_columns, without_ended_links
from quaderno.methods.docsage.entity_values import share_entity_values
from quaderno.methods.docsage.extract import (ChunkResult, ExtractionSettings, all_rows,
                                              extract, mentions)
from quaderno.methods.docsage.misplaced import (misplaced_rows, name_references,
                                                other_kind_rows)
from quaderno.methods.docsage.namesakes import entity_groups
from quaderno.methods.docsage.normalize import (is_null, key_columns, key_name,
                                                normalize_entity, normalize_value,
                                                row_identity)
from quaderno.methods.docsage.rows import Row, value_chunk
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.spellings import plain_spellings
from quaderno.methods.docsage.unstated import states, unstated_rows

log = logging.getLogger(__name__)


class ClearConfig(BaseModel):
    """CLEAR's switches and budgets (spec §5 defaults)."""

    level_a: bool = True
    level_b: bool = True
    correction: bool = True
    default_tau: float = Field(default=0.5, ge=0, le=1)   # without a calibration ([R])
    max_rounds: int = Field(default=2, ge=0, le=5)
    committee_size: int = Field(default=3, ge=1, le=9)
    retrieve_k: int = Field(default=5, ge=1, le=50)
    concurrency: int = Field(default=2, ge=1, le=32)
    acronyms: bool = True
    vote: VoteRule = "committee"   # the committee's rule per cell (correct.tally)


class ClearReport(BaseModel):
    """What CLEAR did, for the run record and the benchmark."""

    chunks: int = 0
    failed_chunks: int = 0
    tuples_extracted: int = 0
    tuples_final: int = 0
    tuples_removed: int = 0        # rows whose entity the committee did not find, a
    # namesake's rows (``namesakes``), and rows naming a body their table refers to as their own entity ("table: name",
    # misplaced.other_kind_rows: the commission as a company)
    other_kind: list[str] = Field(default_factory=list)
    # link rows left out because their chunk says the relationship ended (ended.py): the
    # table, the row's values, its chunk and the clause
    links_ended: list[dict[str, Any]] = Field(default_factory=list)
    # rows of an entity its chunk says is not of a group the question names (denied.py):
    # the table, the row's values, its chunk and the clause
    namesakes: list[dict[str, Any]] = Field(default_factory=list)
    cells_flagged: int = 0
    # committee votes for a value the chunk does not state, over one it does: not applied
    votes_unstated: int = 0
    # rows of an entity their chunk names that no sampled read found (all read nothing)
    votes_abstained: int = 0
    tuples_flagged: int = 0
    tau_low: float | None = None
    calibration: str = ""          # its source, or "uncalibrated default"
    alias_groups: int = 0
    violations_initial: dict[str, int] = Field(default_factory=dict)
    violations_final: dict[str, int] = Field(default_factory=dict)
    corrections: dict[str, int] = Field(default_factory=dict)   # by what: committee, ...
    unresolved: int = 0            # cells NULLed or left without a decision
    rounds: int = 0
    llm_calls_extract: int = 0
    llm_calls_correct: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    constraints_skipped: list[str] = Field(default_factory=list)  # type-mismatched, DB errors
    calibration_refused: list[str] = Field(default_factory=list)  # other score kind or model
    # id key values none of their rows' chunks states ("table.column = value"), whose
    # conflicts were left
    invented_keys: list[str] = Field(default_factory=list)


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


def source_chunk(row: Row, column: str) -> str:
    """The chunk a cell's value came from: an alias-merge fill or a correction names it,
    else the row's (:func:`rows.value_chunk`, which lineage uses too)."""
    return value_chunk(row.provenance.chunk_id, row.provenance.corrections, column)


class _Run:
    """The mutable state of one CLEAR run (rows, counters); not shared between runs."""

    def __init__(self, lm: LM, schema: Schema, chunks: Sequence[Chunk], config: ClearConfig,
                 settings: ExtractionSettings, trace: Trace, committee: Any,
                 retrieve: Retrieve | None, aliases: Mapping[str, str] | None) -> None:
        self.lm, self.schema, self.config, self.settings = lm, schema, config, settings
        self.chunks = {c.id: c for c in chunks}
        self.texts = {c.id: c.render() for c in chunks}
        self.trace, self.committee_lm, self.retrieve, self.aliases = (trace, committee, retrieve,
                                                                  aliases)
        self.report = ClearReport(chunks=len(chunks))
        self.tried: set[tuple[str, str, tuple[str, ...], str]] = set()
        self._ballots: dict[tuple[str, str], list[list[dict[str, Any]]]] = {}
        self.spellings: dict[str, list[str]] = {}   # canonical name -> its other spellings
        self.references = name_references(schema)   # read once: namesakes ask per violation

    def _cell_id(self, row: Row, column: str) -> tuple[str, str, tuple[str, ...], str]:
        table = self.schema.table(row.table)
        key = row_identity(table, row.values, self.aliases) if table is not None else ()
        return (source_chunk(row, column), row.table, key, column)

    def _differ(self, rows: Sequence[Row], members: Sequence[int], col: str) -> bool:
        """``rows[members]`` hold more than one value of ``col``."""
        table = self.schema.table(rows[members[0]].table)
        kind = table.column(col).type if table is not None else "TEXT"
        return len({normalize_value(rows[i].values.get(col), kind) for i in members}
                   - {None}) > 1

    def _invented(self, table: Table, columns: Sequence[str], rows: Sequence[Row]) -> bool:
        """Whether an id of ``columns`` (an INT key column) that ``rows`` share is stated in
        none of the chunks they were read from: a number the model gave each entity, which
        aligns nothing (a name written another way is no such key). Recorded once per value,
        with a fallback."""
        for name in columns:
            value = rows[0].values.get(name)
            if value is None or table.column(name).type != "INT":
                continue
            if any(stated_in(r, name, self.texts) for r in rows):
                continue
            what = f"{table.name}.{name} = {value!r}"
            if what not in self.report.invented_keys:
                self.report.invented_keys.append(what)
                self.trace.fallback(f"docsage.clear: {what} is stated in none of the chunks "
                                    "its rows were read from; they are not settled as one "
                                    "entity")
            return True
        return False

    def _count(self, by: str, n: int = 1) -> None:
        self.report.corrections[by] = self.report.corrections.get(by, 0) + n

    async def committee(self, rows: list[Row], cells: Mapping[int, Sequence[str]],
                        reason: str) -> list[Row]:
        """Re-extract and vote on ``cells`` ({row index: columns}); returns the new rows."""
        rows = list(rows)
        for i, cols in cells.items():
            row = rows[i]
            table = self.schema.table(row.table)
            if table is None:
                continue
            for chunk_id in dict.fromkeys(source_chunk(row, c) for c in cols):
                chunk = self.chunks.get(chunk_id)
                mine = [c for c in cols if source_chunk(row, c) == chunk_id]
                if chunk is None:
                    self.trace.fallback(f"docsage.clear: chunk {chunk_id} not given; cells "
                                        f"{mine} of {row.table} kept unverified")
                    continue
                if (chunk_id, table.name) not in self._ballots:
                    with self.trace.span("docsage.clear.committee", chunk=chunk_id,
                                         table=table.name, reason=reason) as span:
                        ballots, calls = await committee_ballots(
                            self.lm, chunk, table, self.settings, committee=self.committee_lm,
                            n=self.config.committee_size, trace=self.trace)
                        span.outputs = {"calls": calls,
                                        "rows_per_vote": [len(b) for b in ballots]}
                    self._ballots[(chunk_id, table.name)] = ballots
                    self.report.llm_calls_correct += calls
                ballots = self._ballots[(chunk_id, table.name)]
                # a sampled read that found no row at all (or failed) says nothing of an
                # entity its chunk names: it abstains (two empty reads of three dropped
                # Dyrte Fourzixze's stated row in fixes-docsage-set1)
                name = key_name(table, row.values)
                if name and mentions(self.texts.get(chunk_id, ""), name, "TEXT"):
                    ballots = [b for b in ballots if b]
                    if not ballots:
                        self.report.votes_abstained += 1
                        self.tried.update(self._cell_id(row, c) for c in mine)
                        continue
                # an id no chunk states (each read numbers its entities anew) aligns no
                # ballot's row with this one where the rest of its key can (tally)
                votes = tally(ballots, table, row.values, mine,
                              self.aliases, rule=self.config.vote,
                              invented=unstated_ids(table, row, self.texts))
                # the text said this relationship ended (ended.py): a re-read of the same
                # words does not bring it back
                ended = ended_columns(row)
                for col, vote in votes.items():
                    if col in ended:
                        continue
                    self.tried.add(self._cell_id(row, col))
                    if not vote.majority:
                        self.report.unresolved += 1
                    # a sampled re-read's value its chunk does not state ("60" for "60,600
                    # employees") never replaces one it does: unstated.py would empty it
                    if not is_null(vote.value) and \
                            not states(self.schema, row, col, vote.value, self.texts) and \
                            states(self.schema, row, col, row.values.get(col), self.texts):
                        self.report.votes_unstated += 1
                        continue
                    before = len(row.provenance.corrections)
                    row = apply_cell(row, col, vote.value, reason=reason, by="committee",
                                     evidence_chunk=chunk_id, confidence=vote.share)
                    self._count("committee", len(row.provenance.corrections) - before)
            rows[i] = row
        if cells:
            # a vote re-reads the chunk and may write a misplaced name or an unstated value
            # back (misplaced.py, unstated.py): the voted cells are read again, no others
            # (a reference canonicalized since its read is no longer as its chunk writes it)
            rows = unstated_rows(self.schema, misplaced_rows(self.schema, rows), self.texts,
                                 only=cells)
        # a row whose entity the committee did not find (its key voted NULL) is dropped
        keep = [r for r in rows if (t := self.schema.table(r.table)) is None
                or any(r.values.get(k) is not None for k in key_columns(t))]
        self.report.tuples_removed += len(rows) - len(keep)
        return keep

    async def fix(self, rows: list[Row], result: CheckResult) -> list[Row]:
        """One correction round over Level B's violations."""
        idx = result.index_of_tid
        conflicts: dict[tuple[str, tuple[str, ...], str], tuple[list[int], str]] = {}
        redo: dict[int, list[tuple[str, list[str]]]] = {}   # row -> (kind, its cells)
        order = {"fd": 0, "unique": 1, "range": 2, "temporal": 3, "fk": 4}
        for v in sorted(result.violations, key=lambda x: order[x.kind]):
            members = [idx[t] for t in v.tids if t in idx]
            table = self.schema.table(v.table)
            if v.kind in ("fd", "unique") and table is not None:
                lhs = v.columns[:-1] if v.kind == "fd" else v.columns
                # a duplicate key is settled on the single-valued columns its rows disagree
                # on (multi-valued columns are part of the key: rows with different values
                # of them are no duplicates)
                targets = [v.columns[-1]] if v.kind == "fd" else [
                    c.name for c in table.columns if c.name not in lhs and c.single_valued
                    and self._differ(rows, members, c.name)]
                if not targets or self._invented(table, lhs, [rows[i] for i in members]):
                    continue
                key = tuple(str(rows[members[0]].values.get(c)) for c in lhs)
                # namesakes (rows naming different entities they belong to) are settled
                # each among its own rows (namesakes.py)
                for named, part in entity_groups(self.schema, table, lhs,
                                                 [rows[i] for i in members], self.aliases,
                                                 self.references):
                    group = [members[j] for j in part]
                    for col in targets:
                        if not named or self._differ(rows, group, col):
                            conflicts.setdefault((v.table, (*key, *named), col),
                                                 (group, v.kind))
            elif v.kind in ("range", "temporal"):
                for i in members:
                    redo.setdefault(i, []).append((v.kind, v.columns))
            elif v.kind == "fk":
                rows = self._match_parent(rows, members, v)
        for (tname, key, col), (members, kind) in conflicts.items():
            rows = await self._resolve(rows, tname, key, col, members, kind)
        fresh: dict[int, list[str]] = {}
        for i, items in redo.items():
            for kind, cols in items:
                new = [c for c in cols if self._cell_id(rows[i], c) not in self.tried]
                if new:
                    fresh.setdefault(i, []).extend(c for c in new if c not in fresh.get(i, []))
                    continue
                # re-extracted before and still violating: NULL the out-of-range value, or
                # the less confident of the two dates in the wrong order
                conf = rows[i].provenance.confidence
                drop = cols if kind == "range" else [min(cols, key=lambda c: conf.get(c, 0.0))]
                for col in drop:
                    if rows[i].values.get(col) is not None:
                        rows[i] = apply_cell(rows[i], col, None, reason=f"constraint:{kind}",
                                             by="unresolved")
                        self.report.unresolved += 1
                        self._count("unresolved")
        return await self.committee(rows, fresh, "constraint")

    async def _resolve(self, rows: list[Row], tname: str, key: tuple[str, ...], col: str,
                       members: list[int], kind: str) -> list[Row]:
        table = self.schema.table(tname)
        assert table is not None
        candidates = [(rows[i].values.get(col), source_chunk(rows[i], col)) for i in members
                      if rows[i].values.get(col) is not None]
        with self.trace.span("docsage.clear.backtrack", table=tname, entity=list(key),
                             column=col, candidates=[str(v) for v, _ in candidates]) as span:
            entity = [*key, *(x for k in key for x in self.spellings.get(k, []))]
            res, calls = await resolve_conflict(
                self.lm, entity=entity, table=table, column=col, candidates=candidates,
                chunks=self.chunks, retrieve=self.retrieve, trace=self.trace,
                k=self.config.retrieve_k)
            span.outputs = res.model_dump()
        self.report.llm_calls_correct += calls
        if res.by == "unresolved":
            self.report.unresolved += 1
        for i in members:
            before = len(rows[i].provenance.corrections)
            rows[i] = apply_cell(rows[i], col, res.value, reason=f"constraint:{kind}",
                                 by=res.by, evidence_chunk=res.evidence_chunk,
                                 quote=res.evidence_quote)
            self._count(res.by, len(rows[i].provenance.corrections) - before)
        return rows

    def _match_parent(self, rows: list[Row], members: list[int], v: Violation) -> list[Row]:
        """A dangling single-column foreign key naming exactly one parent
        (:func:`anomalies.match_parent`: "Xandria" for "Xandria University") is rewritten to
        that parent's name; otherwise it is left and counted unresolved."""
        ref_table = self.schema.table(str(v.constraint.get("ref_table")))
        if len(v.columns) != 1 or ref_table is None:
            return rows
        col, ref = v.columns[0], v.constraint["ref_cols"][0]
        parents: dict[str, Row] = {}
        for r in rows:
            if r.table == ref_table.name:
                name = normalize_entity(r.values.get(ref), self.aliases)
                if name:
                    parents.setdefault(name, r)
        for i in members:
            near = match_parent(normalize_entity(rows[i].values.get(col), self.aliases),
                                parents)
            if len(near) == 1:
                parent = parents[near[0]]
                rows[i] = apply_cell(rows[i], col, parent.values.get(ref),
                                     reason="constraint:fk", by="fk-match",
                                     evidence_chunk=parent.provenance.chunk_id)
                self._count("fk-match")
            else:
                self.report.unresolved += 1
        return rows


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
    run = _Run(lm, schema, chunks, config, settings, trace, committee, retrieve, aliases)
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
        # a row naming a referenced body as its own entity (the commission as a company)
        rows, others = other_kind_rows(schema, rows)
        for r in others:
            what = f"{r.table}: {r.values.get(key_columns(schema.table(r.table))[0])}"
            if what not in report.other_kind:
                report.other_kind.append(what)
                trace.fallback(f"docsage.clear: left out the row of {what}, a name of a "
                               "body the table refers to, not one of its entities")
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
