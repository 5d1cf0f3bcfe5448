"""The answer from a query's result alone (paper §3.3, Eq. 6), held to that result.

The synthesis step reads the numbered result rows and answers, citing rows. An answer the
result does not bear out is asked for once more, saying why: one giving a number no row holds
(:func:`.grounded.ungrounded`), one saying "not found" of a result that holds values, or one
giving no number from a result of one number (:func:`.grounded.unsaid_value`). A second such
answer, or a failed re-ask, gives way to the rows themselves; an explanation giving a number
no row holds is left out. :class:`Synthesizer` is the part of
:class:`~quaderno.methods.docsage.reason.SQLReasoner` that does this.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from quaderno.errors import StepError
from quaderno.methods.docsage.grounded import rows_answer, ungrounded, unsaid_value
from quaderno.methods.docsage.records import ResultTable
from quaderno.methods.docsage.steps import SYNTHESIZE, fenced
from quaderno.methods.episode import Episode

NOT_FOUND = "not found"


class Unborne(NamedTuple):
    """Why an answer is not borne out by its result: ``kind`` ("denied", "ungrounded",
    "unsaid"), what the record says, the hint the re-ask adds, the numbers no row holds."""

    kind: str
    said: str
    hint: str
    numbers: list[str] = []


class Synthesis(NamedTuple):
    """What the synthesis step answered: the answer, its explanation, the rows it cited,
    the numbers its answers gave that the result does not hold, the numbers its explanation
    gave that the result does not hold (the explanation is then left out: empty), and
    whether the answer is the result rows because the model's answers were not borne out
    (or it failed when re-asked), and why."""

    answer: str
    explanation: str
    cited: list[int]
    ungrounded: list[str]
    explanation_ungrounded: list[str]
    from_rows: bool = False
    why: str = ""


MAX_SHOWN_CELL = 500   # characters of one result cell a prompt shows


def json_cell(value: Any, limit: int | None = None) -> str:
    """A cell as the prompts show it: JSON, a date or a decimal as its text; cut to ``limit``
    characters with a note of how many were left out (a query may build a value of any
    size: ``repeat('x', 50000000)`` made a 50-million-character prompt, review 15)."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}\u2026 ({len(text) - limit} more characters)"


def numbered(table: ResultTable, limit: int) -> str:
    """The first ``limit`` rows of a result, numbered from 1 as the answer cites them, with
    the documents' own words for a stated value."""
    if not table.rows:
        return "(no rows)"
    written: dict[int, list[str]] = {}
    for s in table.stated:
        written.setdefault(s.row, []).append(f"{s.column} written {json_cell(s.quote)}")
    lines = [" | ".join(table.columns)]
    lines += [f"[{i}] " + " | ".join(json_cell(v, MAX_SHOWN_CELL) for v in row)
              + (f"   (as the documents write it: {'; '.join(written[i])})" if i in written
                 else "")
              for i, row in enumerate(table.rows[:limit], start=1)]
    if len(table.rows) > limit:
        lines.append(f"... {len(table.rows) - limit} more rows")
    return "\n".join(lines)


_DENIAL = re.compile(rf"\W*{NOT_FOUND}(?![\w-])", re.IGNORECASE)


def denies(answer: str) -> bool:
    """The answer says the result holds nothing ("not found", "Not found.", "Not found in
    the result"), as the synthesis prompt asks for an empty result; "Not founded until
    1990" says something else."""
    return _DENIAL.match(answer.strip()) is not None


class Synthesizer:
    """Synthesis over a result; ``shown_rows``: how many rows the model is shown."""

    shown_rows: int = 50

    async def synthesize(self, ep: Episode, sql: str, table: ResultTable) -> Synthesis:
        """The answer from the result alone, and the row numbers the model cited (maybe none:
        see :func:`cited_or_shown`). An answer the result does not bear out is asked for
        once more, saying why (:meth:`_unborne`): one giving a number the result does not
        hold (:func:`~quaderno.methods.docsage.grounded.ungrounded`), one saying nothing was
        found (:func:`denies`) from a result that holds values, or one giving no number from
        a result of one number (:func:`~quaderno.methods.docsage.grounded.unsaid_value`). A
        second such answer, or a failed re-ask, gives way to the rows themselves. An
        explanation giving a number the result does not hold is left out (empty), without
        a call of its own."""
        with ep.trace.span("docsage.synthesize", rows=len(table.rows)) as span:
            hint, flagged, cited = "", [], []
            first: Unborne | None = None         # why the answer was asked for once more
            for _ in range(2):
                try:
                    answer, explanation, cited = await self._ask(ep, sql, table, hint)
                except StepError:
                    if first is not None:       # as for a second answer not borne out
                        return self._rows_instead(ep, span, table, cited, flagged,
                                                  f"{first.said}; the re-asked synthesis "
                                                  "failed")
                    ep.trace.fallback("synthesis failed; answered with the first result row",
                                      span)
                    row = table.rows[0] if table.rows else []
                    answer = ", ".join(str(v) for v in row) or NOT_FOUND
                    span.outputs = {"answer": answer, "cited_rows": [1] if row else []}
                    return Synthesis(answer, "", [1] if row else [], flagged, [])
                unborne = self._unborne(ep, sql, table, answer)
                if unborne is None:
                    break
                flagged += [b for b in unborne.numbers if b not in flagged]
                if first is None:
                    first = unborne
                    ep.trace.fallback(f"{unborne.said}; asked once more", span)
                    hint = unborne.hint
                    continue
                why = unborne.said.replace("the answer ", "the answer again ", 1) \
                    if unborne.kind == first.kind else \
                    f"{unborne.said}, asked once more after {first.said}"
                return self._rows_instead(ep, span, table, cited, flagged, why)
            # the explanation is held to the result too; it is not worth a call of its own:
            # one that gives a number no row holds is left out (a 1.5B model answered
            # 63907400000.0 and explained it as "639,074,000,000"); the record says why
            said = ungrounded(explanation, table, shown=self.shown_rows, question=ep.question,
                              sql=sql)
            if said:
                ep.trace.fallback(f"the explanation gave {', '.join(said)}, which no result "
                                  "row holds; left out", span)
                explanation = ""
            span.outputs = {"answer": answer, "cited_rows": cited, "ungrounded": flagged,
                            "explanation_ungrounded": said}
        return Synthesis(answer, explanation, cited, flagged, said)

    def _unborne(self, ep: Episode, sql: str, table: ResultTable,
                 answer: str) -> Unborne | None:
        """Why ``answer`` is not borne out by ``table``, or None (:meth:`synthesize`)."""
        if denies(answer) and any(v is not None for r in table.rows for v in r):
            # a result with a value is no empty one (NULL alone may be the right "not
            # found", read from a matched row): the measuring model answered "not found"
            # from one row holding the right average (oracle tables, network-set3 q002)
            rows = f"{len(table.rows)} row{'s' if len(table.rows) != 1 else ''}"
            return Unborne("denied", f"the answer was {answer!r} from a result with values",
                           f"\n\nYour previous answer was {answer!r}, but the result is not "
                           f"empty: it has {rows} of a query written for the question. "
                           "Answer the question from them.")
        bad = ungrounded(answer, table, shown=self.shown_rows, question=ep.question, sql=sql)
        if bad:
            return Unborne("ungrounded", f"the answer gave {', '.join(bad)}, which no result "
                           "row holds",
                           f"\n\nYour previous answer was {answer!r}. It gives "
                           f"{', '.join(bad)}, which no result row holds: answer with the "
                           "result's own values.", bad)
        value = unsaid_value(answer, table)
        if value is not None:
            return Unborne("unsaid", f"the answer gave no number from a result of one "
                           f"value, {value}",
                           f"\n\nYour previous answer was {answer!r}. The result is one "
                           f"value, {value}, and your answer does not give it: answer the "
                           "question with the result's value.")
        return None

    def _rows_instead(self, ep: Episode, span: Any, table: ResultTable, cited: list[int],
                      flagged: list[str], why: str) -> Synthesis:
        """The result rows as the answer (those cited, else those shown), recorded; no
        explanation (the model's was for an answer no longer given)."""
        ep.trace.fallback(f"{why}; answered with the result rows", span)
        answer = rows_answer(table, self.cited_or_shown(table, cited))
        span.outputs = {"answer": answer, "cited_rows": cited, "ungrounded": flagged,
                        "explanation_ungrounded": []}
        return Synthesis(answer, "", cited, flagged, [], from_rows=True, why=why)

    async def _ask(self, ep: Episode, sql: str, table: ResultTable,
                   hint: str) -> tuple[str, str, list[int]]:
        result = await SYNTHESIZE.run(ep.lm, trace=ep.trace, question=ep.question, sql=sql,
                                      rows=fenced(numbered(table, self.shown_rows)), hint=hint)
        value = result.value
        cited = [i for i in value.cited_rows if 1 <= i <= len(table.rows)]
        return value.answer.strip() or NOT_FOUND, value.explanation, cited

    def cited_or_shown(self, table: ResultTable, cited: list[int]) -> list[int]:
        """The rows an answer rests on: those cited, else every row the model was shown."""
        return cited or list(range(1, min(len(table.rows), self.shown_rows) + 1))


__all__ = ["NOT_FOUND", "Synthesis", "Synthesizer", "Unborne", "denies", "json_cell",
           "numbered"]
