"""DocSage: numbers read at the scale the chunk states them ("$42.8 billion", "USD 54860M"),
not at the scale a small model guesses, and put into their column's unit."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal

import duckdb
import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest
from quaderno.llm.trace import Trace
from quaderno.methods.docsage import chunk_extract as extract_mod
from quaderno.methods.docsage.amounts import (in_unit, mentions_in, read_row, read_stated,
                                              stated_spans, unit_scale)
from quaderno.methods.docsage.column_kinds import column_kind, counted_kind, counts, rescalable
from quaderno.methods.docsage.copies import self_copies
from quaderno.methods.docsage.committee import committee_ballots
from quaderno.methods.docsage.correct import evidence_date, resolve_conflict
from quaderno.methods.docsage.extract import ExtractionSettings, all_rows, extract
from quaderno.methods.docsage.figures import Figures
from quaderno.methods.docsage.rows import coerce, load_rows
from quaderno.methods.docsage.schema import Column, Schema, Table
from quaderno.methods.docsage.store import TupleStore

TEXT = ("Riandgiax Systems reported revenue of $42.8107 billion in 1967. Dixvhukrand: USD "
        "54860M. Vykaexfun earned $1,791,100,000. Bryskound made 43789.5 million dollars; "
        "staff 2.3k; a mast 5m high; a grant of $5m.")
SCHEMA = Schema.model_validate({"tables": [
    {"name": "company", "primary_key": ["name"],
     "columns": [{"name": "name"}, {"name": "founded", "type": "INT"},
                 {"name": "revenue", "type": "DOUBLE"},
                 {"name": "revenue_musd", "type": "DOUBLE", "unit": "USD million"},
                 {"name": "staff", "type": "INT", "description": "number of employees"},
                 {"name": "staff_k", "type": "INT", "unit": "thousand people"}]}]})
TABLE = SCHEMA.tables[0]
NONE = ExtractionSettings(confidence="none")


def run(coro):
    return asyncio.run(coro)


def stated(value):
    reading = read_stated(value, TEXT)
    return None if reading is None else reading[0]


def test_mentions_carry_the_scale_the_text_writes() -> None:
    found = {TEXT[m.start:m.end]: m.value for m in mentions_in(TEXT)}
    assert found["$42.8107 billion"[1:]] == Decimal("42810700000")
    assert found["54860M"] == Decimal("54860000000")
    assert found["1,791,100,000"] == Decimal("1791100000")
    assert found["43789.5 million"] == Decimal("43789500000")
    assert found["2.3k"] == Decimal("2300")
    assert found["1967"] == Decimal("1967")
    # a lone "m" is a scale only after a currency sign: "5m high" may be metres
    fives = sorted(m.value for m in mentions_in(TEXT) if m.digits == 5)
    assert fives == [Decimal(5), Decimal(5_000_000)]
    assert [m.value for m in mentions_in("3 millions and 7 Billion")] == [3_000_000,
                                                                         7_000_000_000]
    assert mentions_in("version v1.5 and 3rd") == []


@pytest.mark.parametrize(("written", "expected"), [
    (42.8107, 42_810_700_000),            # the digits copied: the text's "billion"
    ("42.8107 billion", 42_810_700_000),  # the model wrote the scale itself
    (42810.7, 42_810_700_000),            # converted to millions by the model
    (428107000000, 42_810_700_000),       # a slip by a power of ten (the committee's)
    (54860, 54_860_000_000),
    ("USD 54860M", 54_860_000_000),
    (1791100000, 1_791_100_000),
    ("$1,791,100,000", 1_791_100_000),
    (1791.1, 1_791_100_000),              # converted to millions, digits kept
    (43789.5, 43_789_500_000),
    (2.3, 2300),
    (1967, 1967),
    (-54860, -54_860_000_000),
])
def test_a_stated_number_is_read_at_the_texts_scale(written, expected) -> None:
    assert stated(written) == Decimal(expected)


def test_what_the_text_does_not_state_or_states_ambiguously_is_not_read() -> None:
    assert stated(12) is None            # not in the text
    assert stated(5) is None             # "5m high" and "$5m": two scales for one digit
    assert stated("n/a") is None
    # one significant digit is too little to call a slip: 5000 is not read as "$5m"
    assert read_stated(5000, "a grant of $5m") is None
    # two stated numbers with the same digits at different scales: no slip is chosen
    assert read_stated(4.2, "revenue $42 billion, staff 420") is None


def test_column_units() -> None:
    assert [unit_scale(u) for u in ("USD million", "$M", "millions of dollars", "M USD",
                                    "thousand people", "USD bn", "USD", "", "m", "km")] == [
        6, 6, 6, 6, 3, 9, 0, 0, 0, 0]
    col = TABLE.column("revenue_musd")
    assert in_unit(Decimal("42810700000"), col) == pytest.approx(42810.7)
    assert in_unit(Decimal("2300"), TABLE.column("staff_k")) is None   # 2.3 is no INT
    assert in_unit(Decimal("2000"), TABLE.column("staff_k")) == 2


def test_read_row_rescales_into_the_columns_unit_and_records_the_quote() -> None:
    values = {"name": "Dixvhukrand", "founded": 1967, "revenue": 54860,
              "revenue_musd": "$1,791,100,000", "staff": 2.3, "staff_k": 2.3}
    read, changes = read_row(TABLE, values, TEXT)
    assert read == {"name": "Dixvhukrand", "founded": 1967, "revenue": 54860000000.0,
                    "revenue_musd": pytest.approx(1791.1), "staff": 2300,
                    "staff_k": 2.3}                  # 2,300 people is no whole thousand
    assert {c.column: (c.old, c.evidence_quote) for c in changes} == {
        "revenue": (54860, "54860M"), "revenue_musd": ("$1,791,100,000", "1,791,100,000"),
        "staff": (2.3, "2.3k")}
    assert all((c.reason, c.by, c.evidence_chunk) == ("scale", "as-stated", None)
               for c in changes)
    # keys and years are never rescaled, whatever scale a number with their digits has
    keyed = Schema.model_validate({"tables": [
        {"name": "fund", "primary_key": ["fund_id"],
         "columns": [{"name": "fund_id", "type": "INT"},
                     {"name": "year", "type": "INT"}]}]}).tables[0]
    assert not rescalable(keyed, keyed.column("fund_id"))
    assert read_row(keyed, {"fund_id": 3, "year": 2004}, "fund 3 billion in 2004 billion") == (
        {"fund_id": 3, "year": 2004}, [])


def test_a_year_no_text_writes_and_no_year_can_be_is_emptied() -> None:
    # the 1.5B model's Set1 rows: a chunk about the medal, no birth year in it, and 0 for it
    people = Schema.model_validate({"tables": [
        {"name": "laureates", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "birth_year", "type": "INT"},
                     {"name": "medals", "type": "INT"}]}]}).tables[0]
    text = "S. Vhyrnbraex received the Stedrurial Medal in 2015 and no other medal."
    read, changes = read_row(people, {"name": "S. Vhyrnbraex", "birth_year": 0,
                                      "medals": 0}, text)
    assert read == {"name": "S. Vhyrnbraex", "birth_year": None, "medals": 0}
    assert [(c.column, c.old, c.new, c.reason, c.by) for c in changes] == [
        ("birth_year", 0, None, "placeholder", "as-stated")]
    for year in ("0", 19):
        assert read_row(people, {"birth_year": year}, text)[0] == {"birth_year": None}
    # a duration or an amount whose unit or description says "year" is no calendar year
    spans = Schema.model_validate({"tables": [
        {"name": "staff", "columns": [
            {"name": "tenure", "type": "INT", "unit": "years"},
            {"name": "age", "type": "INT", "description": "age in years"},
            {"name": "revenue", "type": "INT", "description": "revenue of the fiscal year"}]}]}
    ).tables[0]
    kept = {"tenure": 12, "age": 45, "revenue": 5}
    assert read_row(spans, kept, "twelve years at the firm, aged forty-five") == (kept, [])
    # a plausible year, one the text writes, and a missing one stay as they are
    assert read_row(people, {"birth_year": 1970}, text) == ({"birth_year": 1970}, [])
    assert read_row(people, {"birth_year": 19}, "born in the year 19 of the new era") == (
        {"birth_year": 19}, [])
    assert read_row(people, {"birth_year": None}, text) == ({"birth_year": None}, [])


def test_a_zero_no_text_writes_is_emptied_in_any_numeric_column() -> None:
    """The 1.5B model wrote 0 employees for three Set2 companies whose chunks state no
    count, and MIN(employees) picked them. A 0 the text writes, as a figure or a word for
    none, stays; so does a key, and a text column."""
    companies = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_id"],
         "columns": [{"name": "company_id", "type": "INT"}, {"name": "company_name"},
                     {"name": "employees", "type": "INT"},
                     {"name": "revenue", "type": "DOUBLE"}, {"name": "rank"}]}]}).tables[0]
    text = "Rastou Bank (RB) is a company of the Drournlia Markets Commission."
    row = {"company_id": 0, "company_name": "Rastou Bank", "employees": 0, "revenue": 0.0,
           "rank": "0"}
    read, changes = read_row(companies, row, text)
    assert read == {**row, "employees": None, "revenue": None}
    assert [(c.column, c.old, c.new, c.reason, c.by) for c in changes] == [
        ("employees", 0, None, "placeholder", "as-stated"),
        ("revenue", 0.0, None, "placeholder", "as-stated")]
    for stated in ("Rastou Bank has 0 employees left.", "Rastou Bank has no employees.",
                   "Rastou Bank: zero revenue, zero staff.", "It has not paid dividends.",
                   "A winless season for Rastou Bank.", "Admission is free."):
        read, changes = read_row(companies, row, stated)
        assert read["employees"] == 0 and not any(c.column == "employees" for c in changes)
    assert read_row(companies, {"employees": 12}, text) == ({"employees": 12}, [])


def test_extraction_reads_every_scale_so_sql_compares_like_with_like() -> None:
    """The Set2 failure: amounts at four notations, a model copying digits. Read as
    stated, MAX picks the company the text says earns most."""
    chunks = [Chunk(id=f"d{i}#0", text=text) for i, text in enumerate([
        "Riandgiax Systems reported annual revenue of $42.8107 billion.",
        "Dixvhukrand Energy's annual revenue: USD 54860M.",
        "Vykaexfun Holdings earned $1,791,100,000 in annual revenue.",
        "Bryskound Holdings made 63907.4 million dollars in annual revenue."])]
    digits = {"Riandgiax": 42.8107, "Dixvhukrand": 54860, "Vykaexfun": 1791100000,
              "Bryskound": 63907.4}
    schema = Schema.model_validate({"tables": [
        {"name": "revenue", "primary_key": ["company"],
         "columns": [{"name": "company"}, {"name": "amount", "type": "DOUBLE"}]}]})

    def respond(request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        assert "the scale is read from the text" in prompt
        name = next(n for n in digits if f"{n} " in prompt.split("Text (from")[1])
        return json.dumps({"revenue": [{"company": name, "amount": digits[name]}]})

    rows = all_rows(run(extract(LM(FakeLLM(respond=respond)), chunks, schema, NONE)))
    assert {r.values["company"]: r.values["amount"] for r in rows} == {
        "Riandgiax": 42810700000.0, "Dixvhukrand": 54860000000.0,
        "Vykaexfun": 1791100000.0, "Bryskound": 63907400000.0}
    conn = duckdb.connect()
    load_rows(conn, schema, rows)
    assert conn.execute("SELECT company FROM revenue ORDER BY amount DESC LIMIT 1").fetchone() \
        == ("Bryskound",)


def test_the_store_keeps_replies_as_written_and_a_new_reader_reads_them(tmp_path,
                                                                        monkeypatch) -> None:
    """How numbers are read improves often; the stored extraction must not be paid again
    for it. The store holds "42.8107" as the model wrote it; the first reading scales it by
    the text's "billion", a changed reader (here: none) reads the stored row on the next
    question without a call, and the corrections are the reader's of the moment."""
    chunk = Chunk(id="a#0", text="Acme's revenue was $42.8107 billion.")
    schema = Schema.model_validate({"tables": [
        {"name": "company", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "revenue", "type": "DOUBLE"}]}]})
    calls: list[ChatRequest] = []

    def respond(request: ChatRequest) -> str:
        calls.append(request)
        return json.dumps({"company": [{"name": "Acme", "revenue": 42.8107}]})
    fake = FakeLLM(respond=respond)
    store = TupleStore(tmp_path)
    (first,) = all_rows(run(extract(LM(fake), [chunk], schema, NONE, store=store)))
    assert first.values["revenue"] == 42810700000.0 and first.provenance.corrections
    (stored,) = store.get(chunk, schema.tables[0], LM(fake).model_id, NONE)
    assert stored.values["revenue"] == 42.8107 and not stored.provenance.corrections
    monkeypatch.setattr(extract_mod, "read_row", lambda table, values, text: (values, []))
    (again,) = all_rows(run(extract(LM(fake), [chunk], schema, NONE, store=store)))
    assert len(calls) == 1                                  # read from the store
    assert again.values["revenue"] == 42.8107 and not again.provenance.corrections


def test_committee_ballots_read_scales_like_the_extraction() -> None:
    chunk = Chunk(id="a#0", text="Acme's revenue was $42.8107 billion.")
    schema = Schema.model_validate({"tables": [
        {"name": "company", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "revenue", "type": "DOUBLE"}]}]})
    votes = iter([42.8107, "42.8107 billion", 428107000000])
    fake = FakeLLM(respond=lambda r: json.dumps(
        {"company": [{"name": "Acme", "revenue": next(votes)}]}))
    ballots, _ = run(committee_ballots(LM(fake), chunk, schema.tables[0],
                                       ExtractionSettings(), n=3))
    assert [b[0]["revenue"] for b in ballots] == [42810700000.0] * 3


def test_a_judge_copying_digits_from_its_quote_picks_the_candidate_at_the_texts_scale() -> None:
    table = Schema.model_validate({"tables": [
        {"name": "company", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "revenue", "type": "DOUBLE"}]}]}).tables[0]
    old = Chunk(id="old#0", text="In 2015 Acme's revenue was $4.1 billion.")
    new = Chunk(id="new#0", text="In 2023 Acme's revenue was $42.8107 billion.")
    judge = json.dumps({"value": "42.8107", "passage": 2,
                        "quote": "Acme's revenue was $42.8107 billion"})
    res, _ = run(resolve_conflict(
        LM(FakeLLM([judge])), entity=["Acme"], table=table, column="revenue",
        candidates=[(4100000000.0, "old#0"), (42810700000.0, "new#0")],
        chunks={c.id: c for c in (old, new)}, retrieve=None))
    assert (res.value, res.by, res.evidence_chunk) == (42810700000.0, "backtracking", "new#0")


def test_a_judge_taking_a_count_from_a_measure_is_refused_as_extraction_would() -> None:
    """The backtracking judge reads numbers by extraction's rule: a population it quotes
    from "283 square kilometres" is refused, and the latest dated evidence decides."""
    table = Schema.model_validate({"tables": [
        {"name": "city", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "population", "type": "INT"}]}]}).tables[0]
    old = Chunk(id="old#0", text="In 2015 Gaenstas had 150000 inhabitants.")
    new = Chunk(id="new#0", text="In 2022 Gaenstas had 210000 inhabitants over 283 square "
                                 "kilometres.")
    judge = json.dumps({"value": "283", "passage": 2,
                        "quote": "Gaenstas had 210000 inhabitants over 283 square kilometres"})
    trace = Trace()
    res, _ = run(resolve_conflict(
        LM(FakeLLM([judge])), entity=["Gaenstas"], table=table, column="population",
        candidates=[(150000, "old#0"), (210000, "new#0")],
        chunks={c.id: c for c in (old, new)}, retrieve=None, trace=trace))
    assert (res.value, res.by, res.evidence_chunk) == (210000, "latest-evidence", "new#0")
    assert any("283 square kilometres" in f and "not a count" in f for f in trace.fallbacks)


def test_a_rescaled_value_is_dated_by_the_sentence_that_states_it() -> None:
    chunk = Chunk(id="n#0", text="Founded long ago. In 2021 Acme reported USD 54860M.")
    col = TABLE.column("revenue")
    assert evidence_date(chunk, 54860000000.0, col) == (2021, 1, 1)
    assert evidence_date(chunk, 54860.0, TABLE.column("revenue_musd")) == (2021, 1, 1)
    assert evidence_date(chunk, 54860000000.0, "DOUBLE") is None   # by surface form only


@pytest.mark.parametrize(("written", "expected"), [
    ("USD 54860M", 54860000000.0), ("43789.5 million dollars", 43789500000.0),
    ("US$ 5bn", 5e9), ("3 millions", 3e6), ("EUR 1.5 trillion", 1.5e12), ("12 pounds", 12.0)])
def test_cells_written_with_currency_words_are_read(written, expected) -> None:

    assert coerce(written, "DOUBLE") == (expected, True)


@pytest.mark.parametrize("written", ["7 ms", "5s", "12 kg", "usdx 5", "1e5"])
def test_units_that_are_no_scale_are_not_read_as_numbers(written) -> None:

    assert coerce(written, "DOUBLE") == (None, False)


@pytest.mark.parametrize(("text", "written", "expected"), [
    ("Revenue (USD million): 54860", 54860, 54860.0),   # a table counted in millions
    ("It earned $500,000 last year.", 500000, 0.5),      # a currency sign: whole dollars
    ("It earned 2,300,000 dollars.", 2300000, 2.3),      # a million or more: whole dollars
    ("It earned $42.8 billion.", 42.8, 42800.0),
])
def test_a_plain_number_below_one_unit_is_counted_in_the_columns_unit(text, written,
                                                                        expected) -> None:
    read, _ = read_row(TABLE, {"name": "Acme", "revenue_musd": written}, text)
    assert read["revenue_musd"] == pytest.approx(expected)
    number = next(m for m in mentions_in(text) if m.digits == Decimal(str(written)))
    assert stated_spans(text, expected, TABLE.column("revenue_musd")) == [(number.start,
                                                                          number.end)]
    chunk = Chunk(id="t#0", text=f"In 2021: {text}")
    assert evidence_date(chunk, expected, TABLE.column("revenue_musd")) == (2021, 1, 1)


CITY = Schema.model_validate({"tables": [
    {"name": "city", "primary_key": ["name"],
     "columns": [{"name": "name"}, {"name": "population", "type": "INT"},
                 {"name": "budget", "type": "DOUBLE", "unit": "USD"},
                 {"name": "area", "type": "DOUBLE"}]}]}).tables[0]


@pytest.mark.parametrize(("text", "written", "quoted"), [
    # the measuring model's Set3 cells: an area and a budget taken for the population
    ("Some 283 square kilometres are associated with Mergras.", 283, "283 square kilometres"),
    ("At $3.2616 billion, the municipal budget of the city draws attention.", 32616000,
     "$3.2616 billion"),
    ("Turnout was 45 % of 1,200 voters.", 45, "45 %"),
])
def test_a_count_never_takes_money_or_a_measure(text, written, quoted) -> None:
    read, changes = read_row(CITY, {"name": "Mergras", "population": written}, text)
    assert read["population"] is None
    (change,) = changes
    assert (change.column, change.old, change.new, change.reason) == (
        "population", written, None, "unit")
    assert change.evidence_quote == quoted      # the number as the text writes it


@pytest.mark.parametrize(("text", "written", "quoted"), [
    # the measuring model's Set2 cells: three companies' headcounts read as their revenue
    ("With 75,440 employees, Raextaendnas Bank sits among its peers.", 75440,
     "75,440 employees"),
    ("A total of 66790 employees was recorded for Riaska Systems.", 66790, "66790 employees"),
    ("Riaska reports 21 regional offices.", 21, "21 regional offices"),
    ("Riaska runs 340 retail outlets.", 340, "340 retail outlets"),
    ("Riaska counts 57 locations.", 57, "57 locations"),
    # matrix-docsage-set1: an institution's researchers read as a laureate's research grant
    ("Thiarnten Inst. reports 360 researchers.", 360, "360 researchers"),
    ("Riaska employs 40 senior physicians.", 40, "40 senior physicians"),
    ("It counts 12 doctors and nurses.", 12, "12 doctors"),
    # named-no-clear-set1: a laureate's publications read as the research grant, the lowest
    ("Zouzand Grialforn has 413 publications.", 413, "413 publications"),
    ("She holds 12 patents.", 12, "12 patents"),
])
def test_money_never_takes_a_count_of_people_or_things(text, written, quoted) -> None:
    read, changes = read_row(TABLE, {"name": "Acme", "revenue": written}, text)
    assert read["revenue"] is None
    (change,) = changes
    assert (change.reason, change.evidence_quote) == ("unit", quoted)


@pytest.mark.parametrize(("text", "written", "quoted"), [
    # subject-docsage-set2: Bryskound Holdings' founding year read as its employees, the
    # fewest, so its chief executive answered the question
    ("1981 marks the founding of Bryskound.", 1981, "1981 marks the founding"),
    ("It was in 1967 that KOUL became independent.", 1967, "in 1967"),
    ("Records give 1980 for the founding of TI.", 1980, "1980 for the founding"),
    ("Born in 1958, she chairs the board.", 1958, "in 1958"),
    ("The club has played there since 1921.", 1921, "since 1921"),
])
def test_a_count_or_money_never_takes_a_calendar_year(text, written, quoted) -> None:
    for column in ("staff", "revenue"):
        read, changes = read_row(TABLE, {"name": "Acme", column: written}, text)
        assert read[column] is None
        assert [(c.column, c.reason, c.evidence_quote) for c in changes] == [
            (column, "unit", quoted)]
    # a year column takes it as it is
    read, changes = read_row(TABLE, {"name": "Acme", "founded": written}, text)
    assert (read["founded"], changes) == (written, [])


@pytest.mark.parametrize("text", [
    "A total of 1981 employees was recorded for Bryskound.",       # a count, written so
    "Tallies of employees put the company at 1981.",               # no year's words
    "In 1981 the staff counted 1981 people.",                      # a year and a count
    "It employs 1,981 people.",
    "Founded in 19810 BC by legend, it employs 1981.",             # five digits: no year
    # the review of ee9de5b: counts and amounts after words that may precede a year
    "The strike ended in 1981 layoffs.",                           # a noun follows
    "It has a workforce of circa 1981.",
    "It employs c. 1981.",
    "Staff numbers grew from 1981 to 3000.",
    "A headcount of 1981 marks the company's largest ever.",
])
def test_a_number_not_written_as_a_year_is_no_year(text) -> None:
    read, changes = read_row(TABLE, {"name": "Acme", "staff": 1981}, text)
    assert (read["staff"], changes) == (1981, [])


@pytest.mark.parametrize("text", ["Revenue grew from 1981 to 3500.", "It raised circa 1981.",
                                  "The fund closed in 1981 losses."])
def test_an_amount_not_written_as_a_year_is_no_year(text) -> None:
    read, changes = read_row(TABLE, {"name": "Acme", "revenue": 1981}, text)
    assert (read["revenue"], changes) == (1981, [])


def test_a_count_of_works_is_no_kind_a_count_column_is_checked_against() -> None:
    # "publications" counts neither people nor things: a headcount column is not emptied
    # by it (only money is), and a publications column keeps it
    for column, written in (("employees", 413), ("publications", 413)):
        table = Table(name="t", columns=[Column(name="name"),
                                         Column(name=column, type="INT")],
                      primary_key=["name"])
        read, changes = read_row(table, {"name": "Acme", column: written},
                                 "Acme has 413 publications.")
        assert read[column] == 413 and changes == []


def test_money_still_takes_amounts_beside_a_headcount() -> None:
    text = "Acme has 75,440 employees and reported USD 54860M; its staff budget is 900."
    read, _ = read_row(TABLE, {"name": "Acme", "revenue": 54860, "staff": 75440}, text)
    assert (read["revenue"], read["staff"]) == (54860000000.0, 75440)
    budget = Schema.model_validate({"tables": [
        {"name": "unit", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "cost", "type": "DOUBLE"}]}]}).tables[0]
    # a plain number with no count after it is still money's
    assert read_row(budget, {"name": "u", "cost": 900}, text)[0]["cost"] == 900
    # and a column of neither money nor people takes its count
    offices = Schema.model_validate({"tables": [
        {"name": "firm", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "offices", "type": "INT"}]}]}).tables[0]
    assert read_row(offices, {"name": "Riaska", "offices": 21},
                    "Riaska reports 21 regional offices.")[0]["offices"] == 21


FIRMS = Schema.model_validate({"tables": [
    {"name": "companies", "primary_key": ["company_name"],
     "columns": [{"name": "company_name"}, {"name": "employees", "type": "INT"},
                 {"name": "offices", "type": "DOUBLE"}]}]}).tables[0]


def test_people_named_by_what_they_do_are_people_a_length_is_no_one() -> None:
    assert [counted_kind(w) for w in ("researchers", "scientists", "physicians", "doctors",
                                      "kilometers", "litres", "headquarters")] == [
        "people"] * 4 + [""] * 3
    [length] = mentions_in("It runs 12 kilometers of track.")
    assert (length.measure, length.counted) == (True, False)
    read, _ = read_row(FIRMS, {"company_name": "X", "offices": 360},
                       "Thiarnten Inst. reports 360 researchers.")
    assert read["offices"] is None                   # people are no offices
    assert column_kind(Column(name="num_researchers", type="INT")) == "people"


@pytest.mark.parametrize(("text", "values"), [
    # the review of b88899f: what merely ends like an agent noun, and money with its sign
    ("Acme earned $5,400,000 from customers.", {"revenue": 5400000}),
    ("Acme raised $3,000,000 from investors.", {"revenue": 3000000}),
    ("Acme runs 40 data centers.", {"offices": 40}),
    ("Acme counts 12 sectors and 40 offices.", {"offices": 40}),
])
def test_things_ending_like_people_and_money_with_its_sign_are_kept(text, values) -> None:
    table = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "revenue", "type": "DOUBLE"},
                     {"name": "offices", "type": "INT"}]}]}).tables[0]
    read, changes = read_row(table, {"company_name": "X", **values}, text)
    assert {c: read[c] for c in values} == values and changes == []


def test_a_headcount_of_researchers_beside_a_place_stays_stated() -> None:
    said = Figures("Thiarnten Institute has 360 researchers at its main location.")
    assert said.states_number(360, Column(name="researchers", type="INT"))
    # alone in its clause, researchers are no offices (figures' words of people hold them)
    alone = Figures("The institute reports that it has 360 researchers.")
    assert not alone.states_number(360, Column(name="offices", type="INT"))


@pytest.mark.parametrize(("text", "values", "emptied", "quoted"), [
    # docsage-references-set2: "183 offices" read as Kriarngyrtia Energy's employees
    ("As for sector, Kriarngyrtia is recorded under energy. The company has 183 offices.",
     {"employees": 183}, "employees", "183 offices"),
    # docsage-containers-set2: a headcount copied into offices
    ("A total of 60600 employees was recorded for Grounlenkre Energy.",
     {"employees": 60600, "offices": 60600}, "offices", "60600 employees"),
])
def test_a_count_of_things_is_no_headcount_and_the_other_way_round(text, values, emptied,
                                                                    quoted) -> None:
    read, changes = read_row(FIRMS, {"company_name": "X", **values}, text)
    assert read[emptied] is None
    assert [(c.column, c.reason, c.evidence_quote) for c in changes] == [
        (emptied, "unit", quoted)]
    kept = {c: v for c, v in values.items() if c != emptied}
    assert all(read[c] == v for c, v in kept.items())


@pytest.mark.parametrize(("column", "text", "written"), [
    # words of money inside a headcount's name or description (the review of 0bf93a1)
    ({"name": "population", "type": "INT", "description": "number of residents of the capital"},
     "Vhaern has 1,200,000 residents.", 1200000),
    ({"name": "sales_employees", "type": "INT"}, "It has 300 sales employees.", 300),
    ({"name": "sales_staff", "type": "INT"}, "Some 45 staff sell.", 45),
    ({"name": "students", "type": "INT", "description": "at the nonprofit university"},
     "It teaches 12,000 students.", 12000),
])
def test_a_headcount_keeps_its_count_whatever_money_words_its_name_holds(column, text,
                                                                          written) -> None:
    table = Schema.model_validate({"tables": [
        {"name": "t", "primary_key": ["name"], "columns": [{"name": "name"}, column]}]}).tables[0]
    read, changes = read_row(table, {"name": "x", column["name"]: written}, text)
    assert read[column["name"]] == written and changes == []


@pytest.mark.parametrize(("text", "seats"), [("The Orrin Theatre seats 1,200 people.", 1200),
                                             ("The assembly has 120 members.", 120)])
def test_a_capacity_in_seats_takes_a_count_of_people(text, seats) -> None:
    hall = Schema.model_validate({"tables": [
        {"name": "halls", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "seats", "type": "INT"}]}]}).tables[0]
    read, changes = read_row(hall, {"name": "x", "seats": seats}, text)
    assert read["seats"] == seats and changes == []


def test_a_count_of_the_columns_own_kind_or_an_unknown_one_is_kept() -> None:
    text = "Acme has 183 offices, 2,300 staff and 40 plants; 12 divisions report to it."
    read, changes = read_row(FIRMS, {"company_name": "Acme", "employees": 2300,
                                     "offices": 183}, text)
    assert (read["employees"], read["offices"], changes) == (2300, 183, [])
    # "40 plants" are things, as offices are; a divisions count says neither
    read, _ = read_row(FIRMS, {"company_name": "Acme", "offices": 40}, text)
    assert read["offices"] == 40
    read, _ = read_row(FIRMS, {"company_name": "Acme", "employees": 12}, text)
    assert read["employees"] == 12


def test_other_columns_and_plain_counts_keep_their_numbers() -> None:
    text = ("Mergras covers 283 square kilometres, spends $3.2616 billion and has 2053 "
            "thousand inhabitants.")
    read, _ = read_row(CITY, {"name": "Mergras", "population": 2053, "budget": 3.2616,
                              "area": 283}, text)
    assert read == {"name": "Mergras", "population": 2053000, "budget": 3261600000.0,
                    "area": 283}
    # a count stated as plainly as a measure next to it is read from the plain number
    read, changes = read_row(CITY, {"name": "X", "population": 283},
                             "X has 283 residents on 283 square kilometres.")
    assert read["population"] == 283 and changes == []
    assert [counts(c) for c in CITY.columns] == [False, True, False, False]
    assert not counts(Schema.model_validate({"tables": [{"name": "t", "columns": [
        {"name": "staff_cost", "type": "DOUBLE", "unit": "USD million"}]}]}).tables[0]
        .column("staff_cost"))


def test_a_rows_own_name_copied_into_a_persons_column_is_emptied() -> None:
    """Set2 at a1473e6: chief_executive = 'Dixvhukrand' for the company Dixvhukrand, which
    a MIN(employees) query then answered with. Other columns may rightly repeat the name
    (an eponymous album's artist, a city-state's country), and so may the parts of a key."""
    companies = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "chief_executive"},
                     {"name": "founder_name"}, {"name": "artist"}, {"name": "country"},
                     {"name": "employees", "type": "INT"}]}]}).tables[0]
    row = {"company_name": "Dixvhukrand", "chief_executive": " dixvhukrand.",
           "founder_name": "Dixvhukrand", "artist": "Dixvhukrand", "country": "Dixvhukrand",
           "employees": 670}
    read, changes = self_copies(companies, row)
    assert read == {**row, "chief_executive": None, "founder_name": None}
    assert [(c.column, c.old, c.reason) for c in changes] == [
        ("chief_executive", " dixvhukrand.", "self-copy"),
        ("founder_name", "Dixvhukrand", "self-copy")]
    other = {**row, "chief_executive": "Touvha Vhathsiaxpux", "founder_name": None}
    assert self_copies(companies, other) == (other, [])
    # a name that only normalizes the same (legal suffixes) is another company's
    assert self_copies(companies, {"company_name": "Siemens Limited",
                                   "chief_executive": "Siemens AG"})[1] == []
    matches = Schema.model_validate({"tables": [
        {"name": "matches", "primary_key": ["home_team", "away_team"],
         "columns": [{"name": "home_team"}, {"name": "away_team"}, {"name": "captain"}]}]}
    ).tables[0]
    kept = {"home_team": "Lyon", "away_team": "Nice", "captain": "Lyon"}
    assert self_copies(matches, kept) == (kept, [])


def test_a_body_where_only_a_person_can_be_is_emptied() -> None:
    """abstain-docsage-set2: a committee re-read of Gouqin Energy's page, which names no
    chief executive, wrote the commission's name into ``chief_executive``; the vote kept
    it. A founder, an owner or an author may be a body, and so may a column named for one."""
    table = Schema.model_validate({"tables": [
        {"name": "drournliamarketscommission",
         "columns": [{"name": "company_name"}, {"name": "chief_executive"},
                     {"name": "founder"}, {"name": "executive_committee"},
                     {"name": "president_name"}, {"name": "employees", "type": "INT"}]}]}
    ).tables[0]
    dmc = "Drournlia Markets Commission"
    row = {"company_name": "Gouqin Energy", "chief_executive": dmc, "founder": dmc,
           "executive_committee": dmc, "president_name": f"the {dmc}", "employees": 125380}
    read, changes = self_copies(table, row)
    assert read == {**row, "chief_executive": None, "president_name": None}
    assert [(c.column, c.reason) for c in changes] == [("chief_executive", "not-a-person"),
                                                       ("president_name", "not-a-person")]
    # a person's name, and a name that is no body's ("Stedrurial Medal"), stay
    kept = {**row, "chief_executive": "Mithfith Noundgriar", "president_name": "Ulm Bank"}
    assert self_copies(table, kept) == (kept, [])
    # a body may direct, chair or produce (review of 2e70630: "rector" in "director")
    roles = Schema.model_validate({"tables": [
        {"name": "films", "columns": [{"name": "title"}, {"name": "director"},
                                      {"name": "chaired_by"}, {"name": "co_chair"},
                                      {"name": "executive_producer"},
                                      {"name": "executive_authority"},
                                      {"name": "ceo"}]}]}).tables[0]
    bodies = {"title": "Newsreel", "director": "Newsreel Film Society",
              "chaired_by": "Council of Ministers", "co_chair": "African Union",
              "executive_producer": "Ealing Film Society",
              "executive_authority": dmc, "ceo": dmc}
    read, changes = self_copies(roles, bodies)
    assert [c.column for c in changes] == ["ceo"] and read == {**bodies, "ceo": None}
    # a committee's ballot is read the same way: it votes for no value, not the body
    chunk = Chunk(id="d54#0", title="Gouqin Energy",
                  text=f"Gouqin Energy (Gouqin) is a company of the {dmc}. A total of 125,380 "
                       "employees was recorded for Gouqin.")
    fake = FakeLLM(respond=lambda r: json.dumps({table.name: [
        {"company_name": "Gouqin Energy", "chief_executive": dmc, "employees": 125380}]}))
    ballots, _ = asyncio.run(committee_ballots(LM(fake), chunk, table,
                                               ExtractionSettings(confidence="none"), n=2))
    assert [b[0]["chief_executive"] for b in ballots] == [None, None]


@pytest.mark.parametrize(("text", "written", "quoted"), [
    # docsage-head-set2: Riandgiax Systems' and Bridarndou Holdings' revenues as offices
    ("$42.8107 billion is the annual revenue stated for Riandgiax Systems.", 42810700000,
     "$42.8107 billion"),
    ("Bridarndou Holdings has an annual revenue of $46.6939 billion.", 46693900000,
     "$46.6939 billion"),
])
def test_a_count_of_things_never_takes_money_either(text, written, quoted) -> None:
    """Completion searches only for empty cells: with the revenue in ``offices``, Riandgiax
    Systems' offices were never searched for, and its 269 offices never read."""
    firms = Schema.model_validate({"tables": [{"name": "companies",
                                               "primary_key": ["company_name"],
                                               "columns": [{"name": "company_name"},
                                                           {"name": "offices",
                                                            "type": "DOUBLE"}]}]}).tables[0]
    read, changes = read_row(firms, {"company_name": "Riandgiax Systems", "offices": written},
                             text)
    assert read["offices"] is None
    assert [(c.column, c.reason, c.evidence_quote) for c in changes] == [
        ("offices", "unit", quoted)]
    assert counts(firms.column("offices"))
    # a count of offices written plainly stays
    read, _ = read_row(firms, {"company_name": "Riandgiax", "offices": 269},
                       "A total of 269 offices was recorded for Riandgiax.")
    assert read["offices"] == 269


@pytest.mark.parametrize(("column", "expected"), [
    (Column(name="offices", type="INT"), True),
    (Column(name="office_count", type="INT"), True),
    (Column(name="num_stores", type="INT"), True),
    # measures and money about things are no counts of them (the review of 3390d50)
    (Column(name="office_space", type="DOUBLE", unit="square feet",
            description="total floor area of its offices"), False),
    (Column(name="retail_area", type="INT",
            description="sales floor area of its stores in square metres"), False),
    (Column(name="revenue", type="DOUBLE", description="annual revenue from its stores"),
     False),
    (Column(name="plant_capacity", type="DOUBLE", unit="tonnes",
            description="output of its plants"), False),
    # the review of e0bef3f: the thing must be the name's head; a count may say its unit
    (Column(name="office_occupancy_rate", type="DOUBLE"), False),
    (Column(name="stores_pct", type="DOUBLE"), False),
    (Column(name="branch_growth", type="DOUBLE"), False),
    (Column(name="plant_emissions", type="DOUBLE"), False),
    (Column(name="offices", type="INT", unit="count"), True),
    (Column(name="total_offices", type="INT"), True),
    # one list of things for names, kinds and text: locations and outlets count too
    (Column(name="num_locations", type="INT"), True),
    (Column(name="outlet_count", type="INT"), True),
    (Column(name="location_area", type="DOUBLE"), False),
])
def test_a_count_of_things_is_named_so(column, expected) -> None:
    assert counts(column) is expected


def test_what_a_column_counts_is_read_by_whole_words_and_its_name_first() -> None:
    """The review of f0f810c: with locations among the things, an employees column described
    as "across all locations" no longer counted people, and "relocations" counted things."""
    from quaderno.methods.docsage.column_kinds import column_kind, counted_kind
    staff = Column(name="employees", type="INT",
                   description="total number of employees across all locations")
    assert column_kind(staff) == "people"
    read, _ = read_row(Schema.model_validate({"tables": [{
        "name": "companies", "primary_key": ["name"],
        "columns": [{"name": "name"}, staff.model_dump()]}]}).tables[0],
        {"name": "Acme", "employees": 183}, "Acme runs 183 offices.")
    assert read["employees"] is None          # a count of offices is no headcount
    assert counted_kind("relocations") == counted_kind("budget allocations") == ""
    assert counted_kind("num_offices") == counted_kind("retail outlets") == "things"
    # the review of 0fd8f52: a name runs the words together
    for name in ("NumOffices", "officescount", "totalbranches"):
        assert column_kind(Column(name=name, type="INT")) == "things"
