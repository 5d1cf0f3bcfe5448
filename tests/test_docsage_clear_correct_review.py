"""One rule each (issue 11 review): FK parent matching, text folding, years, failed calls."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest

from docsage_fakes import row
from quaderno.corpus.chunk import Chunk
from quaderno.errors import StepError
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.docsage.anomalies import fk_matches, match_parent, value_anomalies
from quaderno.methods.docsage.chunk_extract import failed_calls
from quaderno.methods.docsage.clear import ClearConfig
from quaderno.methods.docsage.corrector import Corrector
from quaderno.methods.docsage.constraints import check
from quaderno.methods.docsage.correct import evidence_date, quote_in
from quaderno.methods.docsage.extract import ExtractionSettings, extract
from quaderno.methods.docsage.normalize import plausible_year
from quaderno.methods.docsage.schema import Schema

SCHEMA = Schema.model_validate({"tables": [
    {"name": "lab", "primary_key": ["name"], "columns": [{"name": "name"}]},
    {"name": "person", "primary_key": ["name"],
     "columns": [{"name": "name"}, {"name": "lab"}, {"name": "born", "type": "INT"}],
     "foreign_keys": [{"cols": ["lab"], "ref_table": "lab", "ref_cols": ["name"]}]}]})
NONE = ExtractionSettings(confidence="none")


def test_detector_and_clear_match_a_parent_by_one_rule() -> None:
    # "Acme Inc." is "acme" normalized: the equal parent wins over "Acme Labs"
    assert match_parent("acme", ["acme", "acme labs"]) == ["acme"]
    assert match_parent("xandria", ["xandria university", "pax"]) == ["xandria university"]
    assert match_parent("", ["acme"]) == []
    rows = [row("lab", "l#0", name="Acme"), row("lab", "l#1", name="Acme Labs"),
            row("person", "p#0", name="Ann", lab="Acme Inc.", born=1970)]
    assert fk_matches(SCHEMA, rows) == []                  # the detector: one parent
    result = check(SCHEMA, rows)
    (v,) = [v for v in result.violations if v.kind == "fk"]
    run = Corrector(LM(FakeLLM()), SCHEMA, [], ClearConfig(), NONE, Trace(), None, None, None)
    members = [result.index_of_tid[t] for t in v.tids]
    fixed = run._match_parent(list(rows), members, v)      # CLEAR: the same parent
    assert fixed[2].values["lab"] == "Acme"
    assert fixed[2].provenance.corrections[-1].evidence_chunk == "l#0"
    assert run.report.unresolved == 0


def test_quotes_are_compared_as_normalize_folds_text() -> None:
    text = "In 2001 Acme moved to Zürich, its new home."
    assert quote_in("“acme moved to zurich”…", text)
    assert not quote_in("Acme moved to Geneva", text)
    assert not quote_in("Acme", text)                      # too short to be evidence


def test_one_notion_of_a_plausible_year() -> None:
    now = dt.date.today().year
    assert plausible_year(1000) and plausible_year(now + 1)
    assert not plausible_year(999) and not plausible_year(now + 2)
    # evidence dating ignores a year no statement can be from, as the detector flags it
    chunk = Chunk(id="c", text=f"By {now + 5} and in 1999 Ann led the lab with 40 staff.")
    assert evidence_date(chunk, 40, "INT") == (1999, 1, 1)
    rows = [row("person", "p", name="Ann", lab=None, born=now + 2)]
    assert [a.kind for a in value_anomalies(SCHEMA, rows, current_year=now)] == [
        "implausible_year"]


def test_a_failed_step_counts_its_real_attempts() -> None:
    trace = Trace()
    fake = FakeLLM(respond=lambda request: "not json at all")
    results = asyncio.run(extract(LM(fake), [Chunk(id="d#0", text="Ann, 1970.")], SCHEMA,
                                  NONE, trace=trace))
    assert results[0].failed and results[0].calls == len(fake.requests) == 2
    assert failed_calls(StepError("s", "bad", attempts=1)) == 1
    assert failed_calls(StepError("s", "bad")) == 1         # unknown: the one call made
    with pytest.raises(StepError) as info:
        from quaderno.methods.docsage.extract_call import EXTRACT, extraction_step
        step = extraction_step(SCHEMA.tables, NONE)
        assert step.name == EXTRACT.name
        asyncio.run(step.run(LM(fake), schema="", doc="d", text="t"))
    assert info.value.attempts == 2
