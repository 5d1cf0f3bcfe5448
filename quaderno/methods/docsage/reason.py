"""Schema-guided relational reasoning (paper §3.3, Eq. 5–6).

:func:`answer_with_sql`: the question is compiled to one DuckDB SELECT over S^q (the DDL with
column descriptions and three sample rows per table, values shown as quoted data); the
query passes the read-only gate and runs in the sandbox; a refusal or database error goes
back to the model for one repair, and an empty result earns one re-compile with a hint
(spec §4). A result of nothing but NULL from no tuple (an aggregate over no rows), or from a
query reading a column no row fills, is empty too, and the hint names those columns; an id
column no row fills is left out of the schema the query is written for
(docsage.empty_ids). A repair that repeats a query which already failed, or an empty one
that read such a column, is not run again: it is asked for once more, sampled (the 1.5B
model repeated the refused query word for word in most measured runs, greedy decoding
giving the same reply to the same mistake). The result rows are traced to their tuples and
chunks, and the answer is synthesized from the result alone, citing rows, and held to it
(:mod:`.synthesis`). When no query yields a value, the answer is "not found" (recorded),
never a guess from outside the database.

:func:`answer_from_tables`: the "w/o SQL reasoning" ablation; the tables are put in the
context and the LLM computes the answer itself.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

from sqlglot import exp

from quaderno.errors import SQLExecutionError, SQLRefusedError, StepError
from quaderno.methods.docsage.empty_ids import without_empty_ids
from quaderno.methods.docsage.lineage import TracedResult, run_with_lineage
from quaderno.methods.docsage.normalize import is_null, key_columns, multi_valued
from quaderno.methods.docsage.records import ResultTable, SQLAttempt
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.value_places import read_tables, value_places
from quaderno.methods.docsage.steps import ANSWER_FROM_TABLES, COMPILE_SQL, fenced
from quaderno.methods.docsage.synthesis import NOT_FOUND, Synthesizer, json_cell
from quaderno.methods.episode import Episode


def sample_rows(schema: Schema, rows: Sequence[Row], per_table: int = 3) -> str:
    """A few rows per table as JSON objects: data shown to the model, quoted."""
    lines = []
    for t in schema.tables:
        mine = [r for r in rows if r.table == t.name][:per_table]
        lines.append(f"{t.name}:" if mine else f"{t.name}: (no rows)")
        lines += [f"  {json_cell({c: r.values.get(c) for c in t.column_names})}" for r in mine]
    return "\n".join(lines)


def render_tables(schema: Schema, rows: Sequence[Row], limit: int = 200) -> str:
    """Every table as a header and pipe-separated rows (at most ``limit`` per table)."""
    out = []
    for t in schema.tables:
        mine = [r for r in rows if r.table == t.name]
        multi = multi_valued(t)
        per = f"; one row per {', '.join([*key_columns(t), *multi])}" if multi else ""
        out.append(f"TABLE {t.name} ({len(mine)} rows{per})\n" + " | ".join(t.column_names))
        out += [" | ".join(json_cell(r.values.get(c)) for c in t.column_names)
                for r in mine[:limit]]
        if len(mine) > limit:
            out.append(f"... {len(mine) - limit} more rows")
    return "\n".join(out)


def result_table(traced: TracedResult) -> ResultTable:
    res = traced.result
    sources = [list(lin.sources) for lin in traced.lineage]
    return ResultTable(sql=res.sql, columns=res.columns, rows=[list(r) for r in res.rows],
                       sources=sources,
                       lineage="partial" if traced.partial else "full",
                       truncated=res.truncated)


def answers_nothing(table: ResultTable) -> bool:
    """No row, or nothing but NULL from no tuple: an aggregate over no rows ("avg" of
    nothing is one NULL row) finds no more than a query that returns none. A NULL the query
    read from a row it matched (a laureate's unknown death year) is that row's answer; with
    partial lineage, where that cannot be told, nothing but NULL is nothing."""
    if any(v is not None for row in table.rows for v in row):
        return False
    return table.lineage != "full" or not any(table.sources)


def finds_nothing(table: ResultTable, schema: Schema, rows: Sequence[Row]) -> bool:
    """:func:`answers_nothing`, or nothing but NULL from a query that reads a column no row
    fills (:func:`empty_columns`): a LEFT JOIN on one matches no row of the joined table,
    and its columns are NULL beside the rows that lineage traces."""
    if answers_nothing(table):
        return True
    if any(v is not None for row in table.rows for v in row):
        return False
    return bool(empty_columns(schema, rows, table.sql))


def empty_columns(schema: Schema, rows: Sequence[Row], sql: str) -> list[str]:
    """The columns ``sql`` names that hold no value in any row of a table it reads that has
    them ("stedrurial_medal.laureate_id"): a join or a condition on one matches nothing."""
    if (parsed := read_tables(schema, sql)) is None:
        return []
    tree, read, alias = parsed
    # (table, column) as the query names them; None for a column unqualified or qualified
    # by a CTE or a derived table, which may read any table
    named = {(alias.get(c.table.lower()) if c.table else None, c.name.lower())
             for c in tree.find_all(exp.Column)}
    return [f"{t.name}.{c}" for t in schema.tables if t.name.lower() in read
            for c in t.column_names
            if ((t.name.lower(), c.lower()) in named or (None, c.lower()) in named)
            and all(is_null(r.values.get(c)) for r in rows if r.table == t.name)]


# the one re-ask of a repair that repeated a failed query: sampled, with a fixed seed so a
# run is reproducible (and the LLM cache does not replay the greedy reply)
RESAMPLE_TEMPERATURE = 0.7
RESAMPLE_SEED = 1


def gate_repairs(requalified: Sequence[str], joined: Sequence[str],
                 hoisted: Sequence[str] = (), respelled: Sequence[str] = ()) -> str:
    """What the gate changed in a query before it ran, in words ("" when nothing): the
    table names it respelled (``retable.respell_tables``), the columns it moved
    (``requalify.py``) or the tables it read for them (``retable.retable``), the tables it
    joined (``autojoin.py``) and the orders it moved out of a subquery
    (:func:`.correlated.hoist_order`)."""
    parts = []
    if respelled:
        parts.append("a table named as the schema spells it: " + "; ".join(respelled))
    if requalified:
        parts.append("columns (or a table) moved to the one table that has them: "
                     + "; ".join(requalified))
    if joined:
        parts.append("a table joined on its declared foreign key: " + "; ".join(joined))
    if hoisted:
        parts.append("a subquery's order by the enclosing query's columns moved out to it: "
                     + "; ".join(hoisted))
    return " and ".join(parts)


def _folded(sql: str) -> str:
    """A query as compared with earlier ones: case and whitespace runs folded."""
    return " ".join(sql.split()).casefold()


class SQLReasoner(Synthesizer):
    """Compile, check, run, repair and synthesize. ``repairs``: re-asks after a refused or
    failed query (the issue: one); ``timeout_s`` and ``max_rows`` bound each query."""

    def __init__(self, *, repairs: int = 1, timeout_s: float = 5.0, max_rows: int = 10_000,
                 shown_rows: int = 50) -> None:
        for name, value in (("repairs", repairs), ("shown_rows", shown_rows)):
            if value < 0:
                raise ValueError(f"{name} must not be negative, got {value}")
        if timeout_s <= 0 or max_rows < 1:
            raise ValueError(f"timeout_s must be positive and max_rows at least 1, got "
                             f"{timeout_s} and {max_rows}")
        self.repairs, self.timeout_s, self.max_rows = repairs, timeout_s, max_rows
        self.shown_rows = shown_rows

    async def _compile(self, ep: Episode, schema: Schema, samples: str, hint: str,
                       attempts: list[SQLAttempt], sampled: bool = False) -> str | None:
        step, seed = COMPILE_SQL, None
        if sampled:
            step = dataclasses.replace(COMPILE_SQL, params={**COMPILE_SQL.params,
                                                            "temperature": RESAMPLE_TEMPERATURE})
            seed = RESAMPLE_SEED
        try:
            result = await step.run(ep.lm, trace=ep.trace, seed=seed, question=ep.question,
                                    schema=schema.describe(), samples=samples, hint=hint)
            return result.value.sql.strip().rstrip(";")
        except StepError as exc:
            attempts.append(SQLAttempt(sql=exc.raw or "", error=str(exc), stage="compile"))
            return None

    async def run(self, ep: Episode, schema: Schema,
                  rows: Sequence[Row]) -> tuple[ResultTable | None, list[SQLAttempt]]:
        """The traced result of the first query that ran (or None), and every attempt."""
        attempts: list[SQLAttempt] = []
        # an id column no row fills only invites a join that matches nothing (empty_ids.py)
        schema, hidden = without_empty_ids(schema, rows)
        if hidden:
            ep.trace.fallback("id columns no row fills left out of the schema the query is "
                              f"written for: {', '.join(hidden)}")
        samples = fenced(sample_rows(schema, rows))
        hint = ""
        best: ResultTable | None = None
        empty_retry_left = True
        repairs_left = self.repairs
        failed: dict[str, str] = {}        # a query that failed (folded) -> its error
        sampled, resample_left = False, True
        with SQLSandbox(schema, rows) as sandbox:
            while True:
                with ep.trace.span("docsage.sql", attempt=len(attempts) + 1) as span:
                    sql = await self._compile(ep, schema, samples, hint, attempts, sampled)
                    sampled = False
                    if sql is None:
                        break
                    if _folded(sql) in failed:
                        error = failed[_folded(sql)]
                        attempts.append(SQLAttempt(sql=sql, stage="repeat",
                                                   error=f"the same as a query that failed: "
                                                         f"{error}"))
                        span.outputs = {"repeat": True}
                        if not resample_left:
                            ep.trace.fallback("the re-asked query repeated a failed one too; "
                                              "no result", span)
                            break
                        resample_left, sampled = False, True
                        hint = (f"\n\nYour previous query was:\n{sql}\nIt failed: {error}\n"
                                "Do not write it again: it will fail the same way. Write a "
                                "different, corrected query.")
                        ep.trace.fallback("the repair repeated a failed query word for word; "
                                          "asked once more, sampling (temperature "
                                          f"{RESAMPLE_TEMPERATURE})", span)
                        continue
                    try:
                        traced = await asyncio.to_thread(run_with_lineage, sandbox, sql,
                                                         timeout_s=self.timeout_s,
                                                         max_rows=self.max_rows)
                    except SQLRefusedError as exc:
                        attempts.append(SQLAttempt(sql=sql, error=str(exc), stage="gate"))
                        failed[_folded(sql)] = str(exc)
                        span.outputs = {"refused": exc.reason}
                    except SQLExecutionError as exc:
                        error = str(exc)
                        repaired = gate_repairs(exc.requalified, exc.joined, exc.hoisted,
                                                exc.respelled)
                        if repaired:
                            error += f" (the query ran with {repaired})"
                            ep.trace.fallback(f"the gate ran the query with {repaired}; "
                                              "it failed anyway", span)
                        attempts.append(SQLAttempt(sql=sql, error=error, stage="execute"))
                        failed[_folded(sql)] = error
                        span.outputs = {"error": exc.kind}
                    else:
                        repaired = gate_repairs(traced.requalified, traced.joined,
                                                traced.hoisted, traced.respelled)
                        if repaired:
                            ep.trace.fallback(f"the gate ran the query with {repaired}",
                                              span)
                        table = result_table(traced)
                        attempts.append(SQLAttempt(sql=sql, rows=len(table.rows)))
                        span.outputs = {"rows": len(table.rows), "lineage": table.lineage}
                        best = table
                        if not finds_nothing(table, schema, rows) or not empty_retry_left:
                            break
                        empty_retry_left = False
                        # the measuring model joined laureates.name to an id column no row
                        # filled: AVG over nothing, one NULL (denied-docsage-set1)
                        empty = empty_columns(schema, rows, sql)
                        # a value compared with a column that does not hold it, where
                        # another does (value_places.py: the gold tables' medal)
                        places = value_places(schema, rows, sql)
                        found = ("returned " + ("no rows." if not table.rows else
                                                "only NULL: no row matched.")
                                 + (f" These columns it reads hold no value in any row: "
                                    f"{', '.join(empty)}; a join or a condition on them "
                                    "matches nothing." if empty else "")
                                 + "".join(f" {p}" for p in places))
                        # written again, a query reading a column no row fills, or comparing
                        # a value with a column that does not hold it, would find nothing
                        # again: asked for once more, sampled, as a repeated failure is
                        # (empty-docsage-set1); any other is the model's answer that
                        # nothing matches ("born before 1900")
                        if empty or places:
                            failed[_folded(sql)] = f"it {found}"
                        hint = (f"\n\nThe query {sql!r} {found} The values in the tables may "
                                "be written differently (see the sample rows): write a query "
                                "that finds them.")
                        ep.trace.fallback("the query returned no rows; re-compiled once with "
                                          "a hint", span)
                        continue
                    if repairs_left == 0:
                        ep.trace.fallback("the repaired query failed too; no result", span)
                        break
                    repairs_left -= 1
                    hint = (f"\n\nYour previous query was:\n{sql}\nIt failed: "
                            f"{attempts[-1].error}\nWrite a corrected query.")
                    ep.trace.fallback(f"query {attempts[-1].stage} error shown to the model "
                                      "for one repair", span)
        return best, attempts

async def answer_from_tables(ep: Episode, schema: Schema, rows: Sequence[Row],
                             limit: int = 200) -> tuple[str, str]:
    """The "w/o SQL reasoning" ablation: the LLM reads the tables and answers."""
    with ep.trace.span("docsage.answer_from_tables", rows=len(rows)) as span:
        try:
            result = await ANSWER_FROM_TABLES.run(ep.lm, trace=ep.trace, question=ep.question,
                                                  tables=fenced(render_tables(schema, rows, limit)))
            answer, explanation = result.value.answer.strip() or NOT_FOUND, \
                result.value.explanation
        except StepError:
            ep.trace.fallback("the answer from tables could not be read; answered "
                              f"{NOT_FOUND!r}", span)
            answer, explanation = NOT_FOUND, ""
        span.outputs = {"answer": answer}
    return answer, explanation
