"""Level B constraints on columns of the wrong type are skipped and noted, never fatal."""

from __future__ import annotations

import datetime as dt

from quaderno.methods.docsage.constraints import check
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import NumericRange, Schema, TemporalOrder

SCHEMA = Schema.model_validate({"tables": [
    {"name": "person", "primary_key": ["name"],
     "columns": [{"name": "name"}, {"name": "born", "type": "INT"},
                 {"name": "died", "type": "DATE"}, {"name": "note"},
                 {"name": "height", "type": "DOUBLE"}]}]})


def row(**values) -> Row:
    return Row(table="person", values=values, provenance=Provenance(chunk_id="c#0"))


ROWS = [row(name="Ada", born=1815, died=dt.date(1852, 11, 27), note="x", height=1.6),
        row(name="Bob", born=1990, died=dt.date(1950, 1, 1), note="y", height=9.0)]


def test_range_on_date_and_text_columns_is_skipped_not_raised() -> None:
    result = check(SCHEMA, ROWS, constraints=[
        NumericRange(table="person", column="died", low=0, high=2000),
        NumericRange(table="person", column="note", low=0, high=1),
        NumericRange(table="person", column="height", low=0, high=3)])
    assert [(v.kind, v.tids) for v in result.violations] == [("range", [2])]
    assert len(result.skipped) == 2
    assert "person.died" in result.skipped[0] and "DATE" in result.skipped[0]
    assert "person.note" in result.skipped[1]


def test_temporal_order_between_a_year_and_a_date_compares_the_year() -> None:
    result = check(SCHEMA, ROWS, constraints=[
        TemporalOrder(table="person", before="born", after="died"),
        TemporalOrder(table="person", before="died", after="born")])
    assert [(v.constraint["before"], v.tids) for v in result.violations] == [
        ("born", [2]), ("died", [1])]
    assert result.skipped == []


def test_temporal_order_on_text_is_skipped_and_other_constraints_still_run() -> None:
    result = check(SCHEMA, ROWS, constraints=[
        TemporalOrder(table="person", before="note", after="died"),
        NumericRange(table="person", column="born", high=1900)])
    assert [(v.kind, v.tids) for v in result.violations] == [("range", [2])]
    assert len(result.skipped) == 1 and "note (TEXT)" in result.skipped[0]


def test_a_database_error_in_one_constraint_is_caught_and_reported(monkeypatch) -> None:
    import duckdb

    from quaderno.methods.docsage import constraints as mod

    def broken(conn, c):
        raise duckdb.BinderException(f"cannot compare {c.cols}")

    monkeypatch.setattr(mod, "_unique", broken)
    result = check(SCHEMA, ROWS)                   # the primary key's unique constraint
    assert any("BinderException" in s for s in result.skipped)


def test_run_clear_survives_a_mistyped_constraint_and_records_a_fallback() -> None:
    import asyncio

    from quaderno.corpus.chunk import Chunk
    from quaderno.llm.fake import FakeLLM
    from quaderno.llm.lm import LM
    from quaderno.llm.trace import Trace
    from quaderno.methods.docsage.clear import ClearConfig, run_clear
    from quaderno.methods.docsage.extract import ExtractionSettings

    schema = SCHEMA.model_copy(update={"constraints": [
        NumericRange(table="person", column="died", low=0, high=2000),
        TemporalOrder(table="person", before="note", after="born")]})
    fake = FakeLLM(respond=lambda request: '{"person": [{"name": "Ada", "born": 1815, '
                   '"died": "1852-11-27", "note": "x", "height": 1.6}]}')
    trace = Trace()
    result = asyncio.run(run_clear(LM(fake), schema, [Chunk(id="d#0", text="Ada 1815 1852")],
                                   config=ClearConfig(level_a=False),
                                   settings=ExtractionSettings(confidence="none"), trace=trace))
    assert len(result.rows) == 1
    assert len(result.report.constraints_skipped) == 2
    assert sum("constraint skipped" in f for f in trace.fallbacks) == 2


def test_null_rates_count_null_words_as_missing_like_is_null() -> None:
    from quaderno.methods.docsage.anomalies import null_rates
    from quaderno.methods.docsage.normalize import is_null

    rows = [row(name="Ada", born="N/A", died=None, note="not mentioned", height=1.6),
            row(name="Bob", born=1990, died="None", note="", height=" unknown ")]
    rates = null_rates(SCHEMA, rows)
    assert rates == {f"person.{c}": sum(is_null(r.values.get(c)) for r in rows) / 2
                     for c in ("name", "born", "died", "note", "height")}
    assert rates["person.born"] == 0.5 and rates["person.died"] == 1.0
    assert rates["person.note"] == 1.0 and rates["person.height"] == 0.5
    assert null_rates(SCHEMA, []) == {}
