"""CLEAR's corrections over one run: the committee that re-reads and votes on flagged cells,
and the Level B round that settles conflicts, re-extracts range and order violations and
matches dangling foreign keys (spec §3, paper §3.2). :func:`.clear.run_clear` makes one
:class:`Corrector` per run and calls :meth:`Corrector.committee` (Level A) and
:meth:`Corrector.fix` (each Level B round); what it did goes into the run's
:class:`.clear_settings.ClearReport`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from quaderno.corpus.chunk import Chunk
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.docsage.aliases import stated_in, unstated_ids
from quaderno.methods.docsage.anomalies import match_parent
from quaderno.methods.docsage.clear_settings import ClearConfig, ClearReport
from quaderno.methods.docsage.committee import committee_ballots, tally, voting_ballots
from quaderno.methods.docsage.constraints import CheckResult, Violation
from quaderno.methods.docsage.correct import Retrieve, apply_cell, resolve_conflict
from quaderno.methods.docsage.ended import ended_columns
from quaderno.methods.docsage.extract import ExtractionSettings
from quaderno.methods.docsage.misplaced import misplaced_rows, name_references
from quaderno.methods.docsage.namesakes import entity_groups
from quaderno.methods.docsage.normalize import (is_null, key_columns, normalize_entity,
                                                normalize_value, row_identity)
from quaderno.methods.docsage.rows import Row, value_chunk
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.unstated import states, unstated_rows


def source_chunk(row: Row, column: str) -> str:
    """The chunk a cell's value came from: an alias-merge fill or a correction names it,
    else the row's (:func:`rows.value_chunk`, which lineage uses too)."""
    return value_chunk(row.provenance.chunk_id, row.provenance.corrections, column)


class Corrector:
    """The mutable state of one CLEAR run's corrections (the committee's ballots, the cells
    tried, the report's counters); not shared between runs."""

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
                # an empty ballot abstains for an entity its chunk names
                ballots = voting_ballots(self._ballots[(chunk_id, table.name)], table,
                                         row.values, self.texts.get(chunk_id, ""))
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


__all__ = ["Corrector", "source_chunk"]
