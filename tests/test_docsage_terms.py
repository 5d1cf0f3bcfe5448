"""What the question measures must be in the schema: the measuring model's Set2 draft
(``docsage-scale-joins-set2``) had companies and commissions and no revenue at all, listed no
required attribute, and nothing flagged it until the SQL gate refused the query twice."""

from __future__ import annotations

import asyncio

import pytest
from docsage_fakes import DraftOnly, row, schema_of
from fake_retriever import ChunkListRetriever
from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.ask import SchemaDiscovery, _problems
from quaderno.methods.docsage.detect import detect_all, unmeasured
from quaderno.methods.docsage.patch import apply_patches
from quaderno.methods.docsage.missing import missing_measures
from quaderno.methods.docsage.terms import asked_for, filtered_by, measured_columns, measures
from quaderno.methods.episode import Episode


@pytest.mark.parametrize(("question", "phrases"), [
    # the generator's eight question types
    ("Which has the higher number of publications, Dyrte Fourzixze or Touslian Brultiathgus?",
     ["publications"]),
    ("Which laureate of the Stedrurial Medal has the latest birth year?", ["birth year"]),
    ("What is the average birth year of the laureates in the Stedrurial Medal whose "
     "nationality is Kraxryndia?", ["birth year"]),
    ("Is there a correlation between the birth year and the number of publications of the "
     "laureates in the Stedrurial Medal?", ["birth year", "publications"]),
    ("What is the sample variance of the research grant across the laureates of the "
     "Stedrurial Medal?", ["research grant"]),
    ("If every city that joined the League of Merounddian Cities after 2011 left it, what "
     "would the average area in square kilometres of the remaining cities be?", ["area"]),
    ("What is the highest annual revenue among the companies of the Drournlia Markets "
     "Commission?", ["annual revenue"]),
    # phrasings of our own
    ("Which of these firms has the most employees?", ["employees"]),
    ("What is the median salary of the players in Denver?", ["salary"]),
    ("Which league has the most cities?", ["cities"]),
    # nothing measured: a count of rows, a mode, a comparison with a number
    ("How many laureates of the Stedrurial Medal have a number of publications between 333 "
     "and 400?", []),
    ("What is the most common genre of the albums?", []),
    ("Which companies have more than 500 employees?", []),
    ("Which is larger, Gilyx or Mergras?", []),
    ("What more do we know about the hotels of Paris?", []),
    ("Which of the hotels is the highest rated?", []),
    ("Which of the companies is the oldest bank?", []),
])
def test_the_measured_phrases_of_a_question(question: str, phrases: list[str]) -> None:
    assert [m.phrase for m in measures(question)] == phrases


def test_a_year_phrase_is_headed_by_its_other_word() -> None:
    (m,) = measures("Which laureate has the latest birth year?")
    assert (m.words, m.head) == (["birth", "year"], "birth")


SET2_QUESTION = ("What is the highest annual revenue among the companies of the Drournlia "
                 "Markets Commission?")
# the draft after the re-key (docsage-scale-joins-set2's final schema)
SET2 = {"tables": [
    {"name": "commissions", "columns": [{"name": "commissionname"}],
     "primary_key": ["commissionname"]},
    {"name": "companies", "columns": [{"name": "companyname"}, {"name": "commissionname"}],
     "primary_key": ["companyname"],
     "foreign_keys": [{"column": "commissionname", "references_table": "commissions",
                       "references_column": "commissionname"}]}],
    "join_path": ["companies", "commissions"]}


def test_the_set2_draft_gets_a_revenue_column_on_the_companies() -> None:
    schema = schema_of(SET2)
    (signal,) = unmeasured(schema, SET2_QUESTION)
    assert signal.kind == "missing_relationship"
    assert "'annual revenue'" in signal.detail
    fix = signal.fix
    # "among the companies" names the table; "Markets Commission" is a name, not a type
    assert (fix.op, fix.table, fix.column, fix.type) == ("add_column", "companies",
                                                         "annual_revenue", "DOUBLE")
    assert not fix.references_table
    repaired, notes = apply_patches(schema, [fix])
    assert notes == []
    assert "annual_revenue" in repaired.table("companies").column_names
    assert unmeasured(repaired, SET2_QUESTION) == []


@pytest.mark.parametrize("holder", [
    {"name": "revenue", "columns": [{"name": "companyname"},
                                    {"name": "amount", "type": "DOUBLE"}]},
    {"name": "figures", "columns": [{"name": "companyname"},
                                    {"name": "revenueamount", "type": "DOUBLE"}]},
    {"name": "figures", "columns": [{"name": "companyname"},
                                    {"name": "amount", "type": "DOUBLE",
                                     "description": "the company's yearly revenue"}]},
])
def test_a_table_column_or_description_holding_the_head_word_is_enough(holder) -> None:
    schema = schema_of({**SET2, "tables": [*SET2["tables"], holder]})
    assert missing_measures(schema, SET2_QUESTION) == []


def test_the_other_words_of_the_phrase_do_not_count_as_holding_it() -> None:
    schema = schema_of({**SET2, "tables": [
        *SET2["tables"], {"name": "reports", "columns": [{"name": "annual_report"}]}]})
    (m,) = missing_measures(schema, SET2_QUESTION)
    assert m.measure.head == "revenue"


def test_only_an_aggregate_adds_a_column() -> None:
    """A size or comparison adjective may name an entity ("the largest shareholder", "the
    lower house"): read as a measure, never added to a schema."""
    schema = schema_of({"tables": [
        {"name": "companies", "columns": [{"name": "name"}], "primary_key": ["name"]}]})
    assert missing_measures(schema, "Who is the largest shareholder of the companies?") == []
    assert [m.measure.phrase for m in missing_measures(
        schema, "Which of the companies has the highest stake?")] == ["stake"]


@pytest.mark.parametrize(("question", "column"), [
    ("Which of the pilots has the highest iq?", "iq"),
    ("Which of the pilots has the highest number of years?", "service_years"),
])
def test_a_short_or_generic_head_is_found_as_a_whole_word(question, column) -> None:
    schema = schema_of({"tables": [
        {"name": "pilots", "columns": [{"name": "name"}, {"name": column, "type": "INT"}],
         "primary_key": ["name"]}]})
    assert missing_measures(schema, question) == []
    assert measured_columns(schema, question) == [("pilots", column)]
    # and missing when nothing has it
    bare = schema_of({"tables": [{"name": "pilots", "columns": [{"name": "name"}],
                                  "primary_key": ["name"]}]})
    assert [m.table for m in missing_measures(bare, question)] == ["pilots"]


def test_a_year_is_an_int_column() -> None:
    schema = schema_of({"tables": [
        {"name": "laureates", "columns": [{"name": "name"}, {"name": "birth_year_x"}],
         "primary_key": ["name"]}]})
    # "birth" is inside birth_year_x: held
    assert missing_measures(schema, "Which laureate has the latest birth year?") == []
    (m,) = missing_measures(schema, "What is the average publication year of the laureates?")
    assert (m.table, m.column, m.type) == ("laureates", "publication_year", "INT")


def test_a_question_naming_no_table_puts_the_measure_in_the_one_entity_table() -> None:
    """The measuring model's held-out Set2 draft (2026-11-29) named its companies' table
    after the commission: "the average number of offices of the companies" found no table,
    so no column was added, and the query's ``offices`` was refused three times."""
    schema = schema_of({"tables": [
        {"name": "qixskouxba_markets_commission", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "country"},
                     {"name": "membership_year", "type": "INT"},
                     {"name": "skiarngoar_country"}],
         "foreign_keys": [{"column": "skiarngoar_country", "references_table": "skiarngoar",
                           "references_column": "country"}]},
        {"name": "skiarngoar", "primary_key": ["country"], "columns": [{"name": "country"}]}]})
    question = ("What is the average number of offices of the companies in the Qixskouxba "
                "Markets Commission whose country is Skiarngoar?")
    (m,) = missing_measures(schema, question)
    assert (m.table, m.column) == ("qixskouxba_markets_commission", "offices")
    # two tables with columns of their own: which one is meant is asked, not guessed
    two = schema_of({"tables": [
        {"name": "firms", "primary_key": ["name"], "columns": [{"name": "name"},
                                                               {"name": "country"}]},
        {"name": "banks", "primary_key": ["name"], "columns": [{"name": "name"},
                                                               {"name": "sector"}]}]})
    assert [m.table for m in missing_measures(two, "What is the average number of offices "
                                                   "of the members?")] == [None]


def test_a_measure_goes_to_the_table_keyed_by_what_the_question_names() -> None:
    """The measuring model's held-out Set1 draft (``s13h-docsage-set1``) named its three
    laureate tables after the prize; "the average number of publications of the laureates"
    found no table named for laureates and no lone table, the signal was asked, nobody
    answered, and the query's ``publications`` was refused three times. The laureates are
    the rows keyed by ``laureate_name``."""
    def table(name: str, columns: str, **extra) -> dict:
        return {"name": name, "primary_key": ["laureate_name"],
                "columns": [{"name": c} for c in ["laureate_name", *columns.split()]], **extra}
    schema = schema_of({"tables": [
        table("vhensese_prize", "gender home_institution field_of_study research_grant"),
        table("vhensese_prize_membership_list", "membership_date gender"),
        table("vhensese_prize_news", "membership_date research_grant birth_year")]})
    question = ("What is the average number of publications of the laureates in the "
                "Vhensese Prize whose gender is female?")
    (m,) = missing_measures(schema, question)
    # two tables have the gender it filters by; the one with more columns of its own
    assert (m.table, m.column) == ("vhensese_prize", "publications")
    # trial rows come before the count of columns, a filter before both
    rows = [row("vhensese_prize_membership_list", f"m{i}", laureate_name=f"L{i}")
            for i in range(3)] + [row("vhensese_prize_news", f"n{i}", laureate_name=f"L{i}")
                                  for i in range(5)]
    assert missing_measures(schema, question, rows)[0].table == \
        "vhensese_prize_membership_list"
    unfiltered = "What is the average number of publications of the laureates?"
    assert missing_measures(schema, unfiltered, rows)[0].table == "vhensese_prize_news"
    # a key the question does not name, or a table with nothing but its key: no holder
    assert [m.table for m in missing_measures(schema, "What is the average number of "
                                              "publications of the winners?")] == [None]
    bare = schema_of({"tables": [table("prize", ""), table("prize_news", "")]})
    assert [m.table for m in missing_measures(bare, unfiltered)] == [None]


def test_a_table_named_for_the_counted_things_does_not_hold_their_count() -> None:
    """The measuring model's fresh Set2 draft (family 5, 2026-11-29: read after the run, so
    this rule is drawn from the split that was to judge the others) had an
    ``employee(company_id, country)`` table; "the average number of employees" found its
    head word in the table's name, no column was added, and the query's ``employee_count``
    was refused three times. A table's name holds a measure only when the table has a
    number of its own to aggregate."""
    schema = schema_of({"tables": [
        {"name": "authority", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "country"}]},
        {"name": "company", "primary_key": ["id"],
         "columns": [{"name": "id", "type": "INT"}, {"name": "authority_name"},
                     {"name": "country"}]},
        {"name": "employee", "primary_key": ["company_id"],
         "columns": [{"name": "company_id", "type": "INT"}, {"name": "country"}]}]})
    question = ("What is the average number of employees of the companies in the Drilthyl "
                "Financial Authority whose country is Driskiund?")
    (m,) = missing_measures(schema, question)
    assert (m.table, m.column, m.role) == ("company", "employees", "measures")
    # with a number of its own, the table named for the measure holds it ("revenue.amount")
    revenue = schema_of({"tables": [
        {"name": "company", "primary_key": ["name"], "columns": [{"name": "name"}]},
        {"name": "revenue", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "amount", "type": "DOUBLE"}]}]})
    assert missing_measures(revenue, "Which company has the highest revenue?") == []


def test_of_two_tables_the_question_names_the_one_with_more_trial_rows_holds_it() -> None:
    schema = schema_of({"tables": [
        {"name": "league", "columns": [{"name": "name"}], "primary_key": ["name"]},
        {"name": "city", "columns": [{"name": "name"}], "primary_key": ["name"]}]})
    question = "Which city of the league has the lowest population?"
    rows = [row("city", f"c{i}", name=f"C{i}") for i in range(3)] + [
        row("league", "l1", name="L")]
    assert missing_measures(schema, question, rows)[0].table == "city"
    more_leagues = [row("league", f"l{i}", name=f"L{i}") for i in range(4)]
    assert missing_measures(schema, question, more_leagues)[0].table == "league"


def test_the_measure_goes_beside_the_column_the_question_filters_on() -> None:
    # the measuring model's Set1 draft (docsage-initials-set1): the question's birth year
    # was added to the first laureate table, the model's SQL read the one with the
    # nationality, and the gate refused it twice ("birth_year ... which the query does not
    # read")
    schema = schema_of({"tables": [
        {"name": "medal_award_laureate", "columns": [
            {"name": "laureate_id", "type": "INT"}, {"name": "award_name"},
            {"name": "year", "type": "INT"}], "primary_key": ["laureate_id", "award_name"]},
        {"name": "medal_award_laureate_nationality", "columns": [
            {"name": "laureate_id", "type": "INT"}, {"name": "nationality"},
            {"name": "year", "type": "INT"}], "primary_key": ["laureate_id", "nationality"]}]})
    question = ("What is the average birth year of the laureates in the Stedrurial Medal "
                "whose nationality is Kraxryndia?")
    (m,) = missing_measures(schema, question)
    assert (m.table, m.column) == ("medal_award_laureate_nationality", "birth_year")
    # trial rows do not outweigh it; without a filter they decide (above), and a column
    # sharing a word the question uses otherwise is no filter
    rows = [row("medal_award_laureate", f"c{i}", laureate_id=1) for i in range(4)]
    assert missing_measures(schema, question, rows)[0].table == \
        "medal_award_laureate_nationality"
    unfiltered = "What is the average birth year of the laureates of each nationality?"
    assert missing_measures(schema, unfiltered, rows)[0].table == "medal_award_laureate"
    leagues = schema_of({"tables": [
        {"name": "league", "columns": [{"name": "name"}, {"name": "city_count", "type": "INT"}],
         "primary_key": ["name"]},
        {"name": "city", "columns": [{"name": "name"}], "primary_key": ["name"]}]})
    cities = [row("city", f"c{i}", name=f"C{i}") for i in range(3)]
    assert missing_measures(leagues, "Which city of the league has the lowest population?",
                            cities)[0].table == "city"
    # "where" filters as "whose" does; a "with" that joins two things filters nothing
    counted = schema_of({"tables": [
        {"name": "league", "columns": [{"name": "name"}, {"name": "city_count", "type": "INT"}],
         "primary_key": ["name"]},
        {"name": "city", "columns": [{"name": "name"}, {"name": "country"}],
         "primary_key": ["name"]}]})
    leagues_rows = [row("league", f"l{i}", name=f"L{i}") for i in range(4)]
    assert missing_measures(counted, "What is the average population of the cities of a "
                            "league where country is Thubroar?", leagues_rows)[0].table == "city"
    for joined in ("compared with the country", "with respect to country"):
        question = f"What is the average population of the leagues {joined} of the cities?"
        assert missing_measures(counted, question, leagues_rows)[0].table == "league"


def test_when_the_question_names_no_table_the_signal_is_asked() -> None:
    schema = schema_of(SET2)
    (signal,) = unmeasured(schema, "What is the highest annual revenue of Drournlia?")
    assert signal.fix is None and signal.kind == "missing_relationship"
    assert (signal.table, signal.column) == ("", "")
    assert _problems([signal]) == (
        "1. missing relationship: the question measures 'annual revenue', which no table, "
        "column or description of the schema holds (values: annual revenue)")


def test_a_re_key_in_the_same_round_keeps_the_measure_repair() -> None:
    # invented ids in the draft: the re-key rewrites references, so join repairs wait a
    # round; a new measure column refers to nothing and is added at once
    schema = schema_of({"tables": [
        {"name": "companies", "columns": [{"name": "companyid", "type": "INT"},
                                          {"name": "companyname"}],
         "primary_key": ["companyid"]}]})
    rows = [row("companies", c, companyid=i, companyname=n)
            for i, (c, n) in enumerate((("c1", "Acme"), ("c2", "Bolt"), ("c3", "Cog")), 1)]
    texts = {"c1": "Acme earns.", "c2": "Bolt earns.", "c3": "Cog earns."}
    found = detect_all(schema, rows, texts, SET2_QUESTION)
    assert [(s.fix.op, s.fix.column) for s in found if s.fix is not None] == [
        ("rekey", "companyname"), ("add_column", "annual_revenue")]


TEXTS = {"r1": "Rastou Bank is regulated by the Drournlia Markets Commission. It reported "
               "USD 63907.4M in revenue for the year.",
         "r2": "Kelvo Trust, under the Drournlia Markets Commission, earned $42.8 billion."}


def test_ask_adds_the_measure_and_the_next_trial_extracts_it() -> None:
    seen = []

    async def trial(schema, probe):
        seen.append(schema)
        revenue = "annual_revenue" in schema.table("companies").column_names
        return [row("companies", c, companyname=n,
                    commissionname="Drournlia Markets Commission",
                    **({"annual_revenue": v} if revenue else {}))
                for c, n, v in (("r1", "Rastou Bank", 63907400000.0),
                                ("r2", "Kelvo Trust", 42800000000.0))] + [
            row("commissions", "r1", commissionname="Drournlia Markets Commission")]

    chunks = [Chunk(id=c, text=t, kb="c") for c, t in TEXTS.items()]
    script = DraftOnly(SET2)
    ep = Episode(SET2_QUESTION, method="docsage", lm=LM(FakeLLM(respond=script)),
                 retriever=ChunkListRetriever(chunks))
    probe = ChunkListRetriever(chunks).retrieve("", 2)
    schema, log = asyncio.run(SchemaDiscovery(mode="active").run(
        ep, probe, probe, extract=trial,
        detect=lambda s, r: detect_all(s, r, TEXTS, SET2_QUESTION)))
    first = log.rounds[0]
    assert [(p["op"], p["table"], p["column"], p["by"]) for p in first.patches] == [
        ("add_column", "companies", "annual_revenue", "detector")]
    assert first.clarifications == []
    assert "annual_revenue" in seen[1].table("companies").column_names
    assert schema.table("companies").column("annual_revenue").type == "DOUBLE"
    assert log.stop_reason == "no uncertainty signal"
    assert len(script.prompts) == 1                  # the draft, and nothing asked


SET1_QUESTION = ("What is the average birth year of the laureates in the Stedrurial Medal whose "
                 "nationality is Kraxryndia?")
# docsage-groups-set1 at f8d275e: the medal tables had no nationality, and the model's SQL
# filtered by it three times, refused each time
SET1 = {"tables": [
    {"name": "stedrurial_medal", "primary_key": ["laureate_id"], "columns": [
        {"name": "laureate_id", "type": "INT"}, {"name": "award_name"},
        {"name": "birth_year", "type": "INT"}]},
    {"name": "stedrurial_medal_laureate", "primary_key": ["laureate_id"], "columns": [
        {"name": "laureate_id", "type": "INT"}, {"name": "birth_year", "type": "INT"},
        {"name": "stedrurial_medal_laureate_name"}]}]}


def test_an_attribute_the_question_filters_by_gets_a_column_when_the_schema_lacks_it() -> None:
    schema = schema_of(SET1)
    (signal,) = unmeasured(schema, SET1_QUESTION)
    assert "filters by 'nationality'" in signal.detail
    fix = signal.fix
    # "the laureates" names the table
    assert (fix.table, fix.column, fix.type) == ("stedrurial_medal_laureate", "nationality",
                                                 "TEXT")
    repaired, notes = apply_patches(schema, [fix])
    assert notes == [] and unmeasured(repaired, SET1_QUESTION) == []


@pytest.mark.parametrize(("question", "found"), [
    (SET1_QUESTION, [("nationality", "TEXT")]),
    ("What is the average population of the cities in the League of Merounddian Cities "
     "whose climate is arid?", [("climate", "TEXT")]),
    ("How many institutions whose annual budget is above 5 million are there?",
     [("annual budget", "DOUBLE")]),
    ("How many companies whose founding year is before 1990 are there?",
     [("founding year", "INT")]),
    ("Which companies whose staff count is 300 are banks?", [("staff", "DOUBLE")]),
    # the review of fabf334: the value is what follows the copula, not a later number;
    # a verb ends the attribute; a question opening with "Whose" filters nothing
    ("How many cities whose climate is arid have over 5 museums?", [("climate", "TEXT")]),
    ("How many companies whose sector was energy in 1990 are there?", [("sector", "TEXT")]),
    ("Which companies whose headquarters moved after 1990 are banks?",
     [("headquarters", "TEXT")]),
    ("Which companies whose revenue exceeds 5 billion are banks?", [("revenue", "DOUBLE")]),
    ("Whose discovery was awarded the Stedrurial Medal in 1990?", []),
    # the review of 0fd8f52: fillers, currency, words before the copula, a verb's number,
    # and a noun in -ed that the copula follows
    ("Which cities whose population in 2010 was above 5 million are there?",
     [("population", "DOUBLE")]),
    ("Which companies whose revenue is $5 million are there?", [("revenue", "DOUBLE")]),
    ("Which companies whose staff is at least 300 are there?", [("staff", "DOUBLE")]),
    ("Which cities whose population surpassed 5 million are there?",
     [("population", "DOUBLE")]),
    ("Which cars whose top speed is above 200 are there?", [("top speed", "DOUBLE")]),
    # "where" and "with" may name an entity, and a generic word is no attribute
    ("In which city where the company is based do most staff live?", []),
    ("Which companies with offices in Paris are banks?", []),
    ("Who is the laureate whose name is Dyrte?", []),
])
def test_the_attributes_a_question_filters_by(question, found) -> None:
    assert [(m.phrase, t) for m, t in filtered_by(question)] == found


def test_a_filter_the_schema_holds_is_not_missing() -> None:
    held = {"tables": [{**SET1["tables"][1], "columns": [
        *SET1["tables"][1]["columns"], {"name": "country", "description": "nationality"}]}]}
    assert missing_measures(schema_of(held), SET1_QUESTION) == []


SET1_RELATIONSHIP = ("What is the home institution of the laureate with the lowest research "
                     "grant in the Stedrurial Medal?")


def test_the_attribute_a_question_asks_for_gets_a_column_when_the_schema_lacks_it() -> None:
    """docsage-set1: no table held an institution, and the answer was a laureate's name."""
    schema = schema_of(SET1)
    signals = unmeasured(schema, SET1_RELATIONSHIP)
    [asked] = [s for s in signals if "asks for" in s.detail]
    assert "'home institution'" in asked.detail
    assert (asked.fix.table, asked.fix.column, asked.fix.type) == (
        "stedrurial_medal_laureate", "home_institution", "TEXT")
    repaired, _ = apply_patches(schema, [s.fix for s in signals])
    assert unmeasured(repaired, SET1_RELATIONSHIP) == []


@pytest.mark.parametrize(("question", "found"), [
    (SET1_RELATIONSHIP, [("home institution", "TEXT")]),
    ("What is the country of the city with the lowest population in the League of "
     "Merounddian Cities?", [("country", "TEXT")]),
    ("Who is the chief executive of the company with the fewest employees?",
     [("chief executive", "TEXT")]),
    ("What is the founding year of Acme?", [("founding year", "INT")]),
    # a measure is measures'; a thing's name, a generic word or no "of" asks for nothing
    ("What is the average population of the cities?", []),
    ("What is the Stedrurial Medal?", []),
    ("What is the name of the city?", []),
    ("What is the best answer?", []),
    ("Which city is the largest?", []),
    # the review of fabf334: a statistic or a rank is no attribute of an entity
    ("What is the percentage of laureates whose nationality is Kraxryndia?", []),
    ("What is the proportion of companies in the energy sector?", []),
    ("What is the share of companies in the energy sector?", []),
    ("Who was the first recipient of the Stedrurial Medal?", []),
    # the review of 0fd8f52: a statistic word as the head, a rank with a role; not these
    ("What is the share price of Acme?", [("share price", "TEXT")]),
    ("What is the top speed of the car Zorn?", [("top speed", "TEXT")]),
    ("What is the second language of Gonqur?", [("second language", "TEXT")]),
])
def test_the_attribute_a_question_asks_for(question, found) -> None:
    assert [(m.phrase, t) for m, t in asked_for(question)] == found


@pytest.mark.parametrize("question", [
    "What is the highest annual revenue among the companies whose revenue is above 5 million?",
    "What is the average number of offices of the companies whose office count is above 10?",
])
def test_one_attribute_gets_one_column(question) -> None:
    """The review of fabf334: "annual revenue" measured and "revenue" filtered were two
    columns."""
    schema = schema_of({"tables": [{"name": "companies", "primary_key": ["company_name"],
                                    "columns": [{"name": "company_name"}]}]})
    assert len(missing_measures(schema, question)) == 1


def test_a_column_of_the_same_stem_holds_the_attribute() -> None:
    schema = schema_of({"tables": [{"name": "companies", "primary_key": ["company_name"],
                                    "columns": [{"name": "company_name"},
                                                {"name": "founded", "type": "INT"}]}]})
    for q in ("What is the founding year of the company Acme?",
              "How many companies whose founding year is before 1990 are there?"):
        assert missing_measures(schema, q) == []


def test_a_stem_holds_an_attribute_only_in_a_name_and_with_an_ending() -> None:
    """The review of 0fd8f52: "funding" was held by a description's "funded", and "listing
    year" by "list of sectors"."""
    schema = schema_of({"tables": [{"name": "projects", "primary_key": ["project_name"],
                                    "columns": [{"name": "project_name"},
                                                {"name": "agency", "description":
                                                 "the agency that funded the project"},
                                                {"name": "sectors",
                                                 "description": "list of sectors"}]}]})
    assert [m.column for m in missing_measures(
        schema, "What is the funding of the project Zorn?")] == ["funding"]
    assert [m.column for m in missing_measures(
        schema, "What is the listing year of the project Zorn?")] == ["listing_year"]
