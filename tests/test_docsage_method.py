"""DocSage end to end with a scripted model that reads the documents it is shown: schema,
extraction, SQL in the sandbox, an answer citing the chunk behind the result row; the
ablations change only their own stage; extraction is paid once across questions."""

from __future__ import annotations

import asyncio
import json
import re
import statistics

import pytest

from docsage_fakes import SYNTHESIS_PROMPT, first_row_answer
from fake_retriever import ChunkListRetriever, ranked
from quaderno.corpus.chunk import Chunk
from quaderno.index.hits import Hit
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.answer import Answer
from quaderno.methods.details import DocSageDetails
from quaderno.methods.docsage.extract import ExtractionSettings
from quaderno.methods.docsage.schema import Table, generic_schema
from quaderno.methods.docsage.store import TupleStore
from quaderno.methods.registry import make_method

DOCS = [
    ("varn", "Varnholt University was founded in 1874. It employs 2,300 staff."),
    ("ostr", "Ostrel College was established in 1921 and has 640 employees."),
    ("quel", "Quellmar Institute, founded 1902, counts 1,150 staff members."),
    ("news", "A storm closed the harbour of Dunmere for two days last winter."),
]
CHUNKS = [Chunk(id=f"{d}#0", text=t, kb="unis", title=d) for d, t in DOCS]
SCHEMA = {"tables": [{"name": "institution", "columns": [
    {"name": "name"}, {"name": "founded", "type": "INT", "description": "founding year"},
    {"name": "staff", "type": "INT", "unit": "people"}], "primary_key": ["name"]}],
    "constraints": [{"kind": "range", "table": "institution", "columns": ["founded"],
                     "low": 1000, "high": 2027}],
    "entity_types": ["institution"],
    "required_attributes": ["institution.name", "institution.founded"]}
FACT = re.compile(r"([A-Z]\w+ (?:University|College|Institute))\D*?(\d{4})\D*?([\d,]+) "
                  r"(?:staff|employees)")


class Retriever(ChunkListRetriever):
    def __init__(self):
        super().__init__(CHUNKS)


class Model:
    """Routes by prompt; extraction really reads the text it is given."""

    def __init__(self, sql="SELECT name, founded FROM institution ORDER BY founded LIMIT 1"):
        self.sql = sql
        self.calls: dict[str, int] = {}
        self.prompts: list[str] = []

    def __call__(self, request):
        user = request.messages[-1].content
        self.prompts.append(user)
        kind = " ".join(user.split()[:3])
        self.calls[kind] = self.calls.get(kind, 0) + 1
        if user.startswith("Design the smallest"):
            return json.dumps(SCHEMA)
        if user.startswith("Revise this relational schema"):
            return json.dumps(SCHEMA)
        if user.startswith("Extract into the tables below"):
            text = user.split('"""')[1]
            rows = [{"name": m[1], "founded": int(m[2]), "staff": int(m[3].replace(",", ""))}
                    for m in FACT.finditer(text)]
            return json.dumps({"institution": rows})
        if user.startswith("Write one DuckDB SELECT"):
            return json.dumps({"sql": self.sql})
        if user.startswith(SYNTHESIS_PROMPT):
            return first_row_answer(user)
        if user.startswith("Answer the question from these tables"):
            return json.dumps({"answer": "Varnholt University"})
        raise AssertionError(f"unexpected prompt {user[:80]!r}")

    def extractions(self):
        return self.calls.get("Extract into the", 0)


def answer(name, model, tmp_path, question="Which member institution is the oldest?",
           retriever=None, **opts) -> Answer:
    method = make_method(name, LM(FakeLLM(respond=model)), retriever or Retriever(),
                         {"store_dir": str(tmp_path / "store"), **opts})
    return asyncio.run(method.answer(question))


def test_full_docsage_answers_from_sql_with_the_source_chunk(tmp_path):
    a = answer("docsage", Model(), tmp_path)
    assert a.answer == "Varnholt University"
    d = a.details
    assert isinstance(d, DocSageDetails) and d.variant == "full"
    assert [t.name for t in d.db_schema.tables] == ["institution"]
    assert d.ask.mode == "active" and d.ask.stop_reason == "no uncertainty signal"
    assert d.sql[-1].stage == "ok" and d.result.rows == [["Varnholt University", 1874]]
    src = d.result.sources[0]
    assert [s.chunk_id for s in src] == ["varn#0"]
    # the span points at the evidence in the chunk: from the name to the last value read
    text = CHUNKS[0].text
    assert text[src[0].char_start:src[0].char_end] == \
        "Varnholt University was founded in 1874. It employs 2,300"
    assert [e.chunk_id for e in a.evidence] == ["varn#0"]
    assert d.clear["tuples_final"] == 3 and d.chunks_read == 4
    assert {r["name"] for r in d.tables["institution"]} == {
        "Varnholt University", "Ostrel College", "Quellmar Institute"}
    assert "Varnholt University" in a.context
    spans = {s.name for s in a.trace.spans}
    assert {"docsage.gather", "docsage.ask", "docsage.clear", "docsage.sql",
            "docsage.synthesize"} <= spans
    # round-trips as a result record would
    back = Answer.model_validate_json(a.model_dump_json())
    assert back.details == a.details


@pytest.mark.parametrize("sql,expected", [
    ("SELECT avg(staff) AS mean_staff FROM institution", 1363.3333333333333),
    ("SELECT median(founded) FROM institution", 1902.0),
    # the three institutions' (founded, staff): (1874, 2300), (1921, 640), (1902, 1150)
    ("SELECT corr(founded, staff) FROM institution",
     statistics.correlation([1874, 1921, 1902], [2300, 640, 1150])),
    ("SELECT count(*) FROM institution WHERE founded BETWEEN 1900 AND 1950", 2),
    ("SELECT var_samp(staff) FROM institution", statistics.variance([2300, 640, 1150])),
])
def test_aggregates_trace_every_tuple(tmp_path, sql, expected):
    a = answer("docsage", Model(sql=sql), tmp_path)
    d = a.details
    assert d.sql[-1].stage == "ok", d.sql
    assert d.result.rows[0][0] == pytest.approx(expected)
    # a global aggregate rests on the tuples it read
    n = 2 if "BETWEEN" in sql else 3
    assert len(d.result.sources[0]) == n
    assert {e.chunk_id for e in a.evidence} <= {"varn#0", "ostr#0", "quel#0"}


def test_a_hostile_query_is_refused_repaired_once_then_not_found(tmp_path):
    a = answer("docsage", Model(sql="DROP TABLE institution"), tmp_path)
    d = a.details
    # the repair and its one sampled re-ask repeat the refused statement: neither is run
    assert [x.stage for x in d.sql] == ["gate", "repeat", "repeat"]
    assert a.answer == "not found"
    assert any("repair" in f for f in a.trace.fallbacks)


def test_a_query_with_no_rows_is_recompiled_once_with_a_hint(tmp_path):
    model = Model(sql="SELECT name FROM institution WHERE founded > 3000")
    a = answer("docsage", model, tmp_path)
    # written again after the hint, it is the model's answer that nothing matches (a query
    # reading a column no row fills is asked for once more: test_docsage_sql_repeat.py)
    assert [(x.stage, x.rows) for x in a.details.sql] == [("ok", 0), ("ok", 0)]
    assert model.calls["Write one DuckDB"] == 2
    assert a.answer == "not found"


def test_an_aggregate_of_nothing_is_recompiled_once_then_not_found(tmp_path):
    """AVG over no rows is one NULL row: no value, so the same hint and the same answer as
    a query with no rows (denied-docsage-set1), not a synthesis from NULL."""
    model = Model(sql="SELECT avg(staff) FROM institution WHERE founded > 3000")
    a = answer("docsage", model, tmp_path)
    assert [(x.stage, x.rows) for x in a.details.sql] == [("ok", 1), ("ok", 1)]
    assert model.calls["Write one DuckDB"] == 2
    assert a.answer == "not found" and model.calls.get("Answer the question", 0) == 0


def test_ablations_change_only_their_stage(tmp_path):
    generic = answer("docsage-generic-schema", Model(), tmp_path / "g")
    assert generic.details.variant == "w/o schema discovery"
    assert [t.name for t in generic.details.db_schema.tables] == ["facts"]
    assert generic.details.ask.mode == "generic"

    passive = answer("docsage-passive", Model(), tmp_path / "p")
    assert passive.details.ask.mode == "passive" and passive.answer == "Varnholt University"

    no_clear = answer("docsage-no-clear", Model(), tmp_path / "c")
    assert no_clear.details.variant == "w/o CLEAR"
    assert no_clear.details.clear["tau_low"] is None
    assert not any(s.name == "docsage.clear.level_b" for s in no_clear.trace.spans)

    # the paper's "w/o CLEAR (Logic Checking)": Level A's confidence stays, Level B goes
    no_logic = answer("docsage-no-logic-check", Model(), tmp_path / "l")
    assert no_logic.method == "docsage-no-logic-check"
    assert no_logic.details.variant == "w/o CLEAR (Logic Checking)"
    assert no_logic.details.clear["tau_low"] is not None
    assert not any(s.name == "docsage.clear.level_b" for s in no_logic.trace.spans)
    assert no_logic.answer == "Varnholt University"

    no_sql = answer("docsage-no-sql", Model(), tmp_path / "s")
    assert no_sql.details.variant == "w/o SQL reasoning" and no_sql.details.sql == []
    assert "TABLE institution (3 rows)" in no_sql.context

    no_ext = asyncio.run(make_method("docsage-no-extraction", LM(FakeLLM(respond=lambda r:
                                     "<answer>Varnholt University</answer>")),
                                     Retriever()).answer("Which is the oldest?"))
    assert no_ext.method == "docsage-no-extraction" and no_ext.details is None


def test_extraction_is_paid_once_across_questions(tmp_path):
    first = Model()
    one = answer("docsage", first, tmp_path, "Which member institution is the oldest?")
    second = Model()
    two = answer("docsage", second, tmp_path, "How many staff do the members employ in total?")
    assert first.extractions() >= 4
    assert second.extractions() <= 0.3 * first.extractions()
    # the details tell the tuples this question's calls read (ASK's trials included) from
    # those the store held: the benchmark divides a question's cost by the first only
    assert one.details.tuples_new == one.details.clear["tuples_extracted"] >= 3
    assert two.details.clear["tuples_extracted"] == one.details.clear["tuples_extracted"]
    assert two.details.tuples_new == two.details.clear["tuples_new"] == 0
    assert one.details.table_sizes == {t: len(rows) for t, rows in one.details.tables.items()}
    assert sum(one.details.table_sizes.values()) >= 3


REPRINT = Chunk(id="reprint#0", kb="unis", title="reprint",
                text="Varnholt University was founded in 1876. It employs 2,300 staff.")
ERRATUM = Chunk(id="errata#0", kb="unis", title="errata",
                text="Erratum: Varnholt University was founded in 1874, not 1876 as printed.")


class ConflictRetriever(Retriever):
    """The question finds the four documents and a misprint; only backtracking, asking about
    both founding years, finds the erratum."""

    def retrieve(self, query: str, k: int = 5) -> list[Hit]:
        self.queries.append(query)
        found = [ERRATUM] if "1874" in query and "1876" in query else [*CHUNKS, REPRINT]
        return ranked(found[:k])


class JudgingModel(Model):
    def __call__(self, request):
        user = request.messages[-1].content
        if "Documents disagree" in user:
            passage = re.search(r"\[(\d+)\] errata:", user)
            return json.dumps({"value": "1874", "passage": int(passage[1]),
                               "quote": "Varnholt University was founded in 1874, not 1876"})
        return super().__call__(request)


def test_the_evidence_that_settled_a_conflict_is_cited(tmp_path):
    # the trial extraction reads only the first four chunks, so ASK sees no conflict
    probe = {"probe_size": 4, "probe_docs": 4}
    a = answer("docsage", JudgingModel(), tmp_path, retriever=ConflictRetriever(), **probe)
    assert a.answer == "Varnholt University"
    assert a.details.clear["corrections"].get("backtracking") == 1
    (src,) = a.details.result.sources[0]
    assert src.cell_chunks == {"founded": "errata#0"}
    # the answer cites the chunk whose quoted words settled the founding year
    assert "errata#0" in [e.chunk_id for e in a.evidence]
    assert {e.chunk_id for e in a.evidence} <= {"varn#0", "reprint#0", "errata#0"}

    # without SQL the tables are the context: the chunk that settled a cell is cited too
    a = answer("docsage-no-sql", JudgingModel(), tmp_path, retriever=ConflictRetriever(),
               **probe)
    assert a.details.clear["corrections"].get("backtracking") == 1
    assert "errata#0" in [e.chunk_id for e in a.evidence]
    # without the logic check the conflict is never seen, so nothing is looked up
    retriever = ConflictRetriever()
    a = answer("docsage-no-logic-check", JudgingModel(), tmp_path, retriever=retriever,
               **probe)
    assert a.details.clear["corrections"] == {}
    assert not any("1874" in q and "1876" in q for q in retriever.queries)


# -- the command line ------------------------------------------------------------------------
@pytest.fixture
def cli_home(tmp_path):
    from quaderno.workspace import Workspace
    ws = Workspace(tmp_path / "home")
    ws.add_kb("unis", CHUNKS)
    ws.build_index("unis", embedder=None)
    return ws.root


def test_ask_docsage_json_and_trace_over_http(cli_home):
    from typer.testing import CliRunner

    from quaderno.cli.main import app
    from quaderno.llm.testing import FakeOpenAIServer
    from quaderno.llm.types import ChatRequest

    model = Model()
    with FakeOpenAIServer(reply=lambda body: model(ChatRequest.of(body["messages"]))) as srv:
        # BM25 gathers only chunks sharing a word with the question or a table's columns
        base = ["ask", "Which member university, college or institute is the oldest?",
                "--method", "docsage", "--opt", "samples=2",
                "--llm", "openai", "--model", "fake-model", "--base-url", srv.url,
                "--home", str(cli_home), "--no-cache"]
        res = CliRunner().invoke(app, [*base, "--json"])
        assert res.exit_code == 0, res.output
        data = json.loads(res.output)
        d = data["details"]
        assert data["answer"] == "Varnholt University" and d["kind"] == "docsage"
        assert d["db_schema"]["tables"][0]["name"] == "institution"
        assert len(d["tables"]["institution"]) == 3
        assert d["sql"][-1]["sql"].startswith("SELECT name, founded FROM institution")
        assert d["result"]["rows"] == [["Varnholt University", 1874]]
        assert d["result"]["sources"][0][0]["chunk_id"] == "varn#0"
        assert [e["chunk_id"] for e in data["evidence"]] == ["varn#0"]
        # the tuple store lives in the workspace
        assert (cli_home / "docsage" / "unis").is_dir()

        res = CliRunner().invoke(app, [*base, "--trace"])
        assert res.exit_code == 0, res.output
        out = res.output
        assert "docsage.ask" in out and "docsage.ask.round" in out
        assert "SQL: SELECT name, founded FROM institution" in out and "varn#0" in out


def test_prune_drops_columns_the_question_does_not_need(tmp_path):
    kept = answer("docsage", Model(), tmp_path / "a")
    assert kept.details.db_schema.table("institution").column_names == ["name", "founded",
                                                                        "staff"]
    pruned = answer("docsage", Model(), tmp_path / "b", prune=True)
    # staff is neither required, a key nor constrained
    assert pruned.details.db_schema.table("institution").column_names == ["name", "founded"]
    assert pruned.answer == "Varnholt University"


def test_the_schema_is_offered_only_the_known_tables_about_the_question(tmp_path):
    """The tuple store offers its tables to the initial schema so a question can re-use
    them; the generic facts table an ablation run left there is about nothing the question
    names, and offering it made the measuring model copy it into its schema. A table no
    chunk gave a row of is not offered either."""
    store = TupleStore(tmp_path / "store")
    facts = generic_schema().tables[0]
    # a table an earlier draft asked for and no chunk stated: nothing of it to re-use
    rectors = Table.model_validate({"name": "institution_rectors", "columns": [
        {"name": "institution_name"}, {"name": "rector"}]})
    for chunk in CHUNKS:  # covers more chunks than any other table: offered first before
        store.put(chunk, facts, "m", ExtractionSettings(confidence="none"), [])
        store.put(chunk, rectors, "m", ExtractionSettings(confidence="none"), [])
    answer("docsage", Model(), tmp_path)  # extracts and stores the institution table

    def offered(question):
        model = Model()
        a = answer("docsage", model, tmp_path, question=question)
        [design] = [p for p in model.prompts if p.startswith("Design the smallest")]
        shown = design.split("when it fits the question):\n")[1].split("\n\n")[0]
        # the record says which tables were offered: the draft depends on what was stored
        assert a.details.ask.offered == re.findall(r"^- (.+)$", shown, re.M)
        [ask] = [s for s in a.trace.spans if s.name == "docsage.ask"]
        assert ask.inputs["offered"] == a.details.ask.offered
        return shown
    assert offered("Which member institution is the oldest?") == (
        "- institution(name TEXT, founded INT, staff INT)")
    assert offered("Which harbour did the storm close?") == "(none)"


def test_without_offer_known_a_draft_reads_the_documents_alone(tmp_path):
    """An ablation grid runs configurations one after another on one store: offering what
    the earlier ones stored made each draft depend on which ran before it."""
    answer("docsage", Model(), tmp_path)  # extracts and stores the institution table
    for offer, shown in ((True, "- institution(name TEXT, founded INT, staff INT)"),
                         (False, "(none)")):
        model = Model()
        a = answer("docsage", model, tmp_path, offer_known=offer)
        [design] = [p for p in model.prompts if p.startswith("Design the smallest")]
        assert design.split("when it fits the question):\n")[1].split("\n\n")[0] == shown
        assert a.answer == "Varnholt University"
        # the stored tuples are re-used either way: the same table, no new extraction
        assert not [p for p in model.prompts if p.startswith("Extract into")]


def test_what_the_question_measures_is_added_to_a_schema_without_it(tmp_path):
    """The run hands the question to the detector: a draft with no column for the measured
    "endowment" gets one before the final extraction, and the SQL prompt shows it."""
    model = Model(sql="SELECT name FROM institution ORDER BY endowment DESC LIMIT 1")
    a = answer("docsage", model, tmp_path,
               question="Which member institution has the highest endowment?")
    d = a.details
    column = d.db_schema.table("institution").column("endowment")
    assert column.type == "DOUBLE"
    assert [(p["op"], p["column"]) for p in d.ask.rounds[0].patches] == [
        ("add_column", "endowment")]
    [sql_prompt] = [p for p in model.prompts if p.startswith("Write one DuckDB SELECT")]
    assert "endowment" in sql_prompt


class FiguresOnly(Model):
    """Synthesis answers with row [1]'s number in bare figures, as the measuring model did
    ("63907400000.0" for a revenue its document writes "USD 63907.4M"), citing ``cite``."""

    def __init__(self, sql, cite=(1,)):
        super().__init__(sql=sql)
        self.cite = list(cite)

    def __call__(self, request):
        user = request.messages[-1].content
        if user.startswith(SYNTHESIS_PROMPT):
            self.prompts.append(user)
            return json.dumps({"answer": re.search(r"\[1\] (\d+)", user)[1],
                               "cited_rows": self.cite})
        return super().__call__(request)


def test_a_number_in_figures_only_gets_the_documents_words_for_it(tmp_path):
    model = FiguresOnly(sql="SELECT max(staff) AS most FROM institution")
    a = answer("docsage", model, tmp_path, question="How many staff does the largest "
               "member institution employ?")
    d = a.details
    assert d.result.rows == [[2300]]
    (stated,) = d.result.stated
    assert (stated.row, stated.column, stated.value, stated.quote, stated.chunk_id) == (
        1, "most", 2300, "2,300 staff", "varn#0")
    assert a.answer.startswith("2300 (written \"2,300 staff\"")
    # the synthesis step saw the words too
    assert 'most written "2,300 staff"' in model.prompts[-1]
    # a count is no stated value: the same collection, no quote
    b = answer("docsage", FiguresOnly(sql="SELECT count(*) FROM institution"), tmp_path,
               question="How many member institutions are there?")
    assert b.details.result.rows == [[3]] and b.details.result.stated == []
    assert b.answer == "3"


def test_a_quote_comes_only_from_a_row_the_answer_rests_on(tmp_path):
    # three rows and nothing cited: the number may be the model's own, no quote is added
    many = answer("docsage", FiguresOnly(sql="SELECT staff FROM institution ORDER BY staff "
                                             "DESC", cite=()), tmp_path)
    assert len(many.details.result.rows) == 3 and many.details.result.stated
    assert many.answer == "2300" and many.details.cited_rows == [1, 2, 3]
    # one row and nothing cited: that row is the answer's
    one = answer("docsage", FiguresOnly(sql="SELECT max(staff) FROM institution", cite=()),
                 tmp_path)
    assert one.answer.startswith('2300 (written "2,300 staff"')


STAFFING = {"tables": [
    {"name": "institution", "columns": [{"name": "name"},
                                        {"name": "founded", "type": "INT"}],
     "primary_key": ["name"]},
    # institution_name names the institution's key, and the draft declares no foreign key
    {"name": "staffing", "columns": [{"name": "institution_name"},
                                     {"name": "staff", "type": "INT"}]}],
    "entity_types": ["institution"], "required_attributes": ["institution.name"]}


class StaffingModel(Model):
    """Drafts the two tables above, extracts into both, and writes the query the 1.5B model
    writes: the staff read from the institution table, without the join."""

    def __init__(self):
        super().__init__(sql="SELECT name FROM institution ORDER BY staff DESC LIMIT 1")

    def __call__(self, request):
        user = request.messages[-1].content
        if user.startswith(("Design the smallest", "Revise this relational schema")):
            self.prompts.append(user)
            return json.dumps(STAFFING)
        if user.startswith("Extract into the tables below"):
            self.prompts.append(user)
            text = user.split('"""')[1]
            found = list(FACT.finditer(text))
            return json.dumps({
                "institution": [{"name": m[1], "founded": int(m[2])} for m in found],
                "staffing": [{"institution_name": m[1], "staff": int(m[3].replace(",", ""))}
                             for m in found]})
        return super().__call__(request)


def test_a_query_without_its_join_is_answered_through_the_named_reference(tmp_path):
    """End to end: ASK declares the foreign key the column name implies, the SQL prompt
    shows it, the gate adds the join the query left out, and the answer traces to both
    tables' chunk."""
    model = StaffingModel()
    a = answer("docsage", model, tmp_path, question="Which institution has the most staff?")
    d = a.details
    assert a.answer == "Varnholt University"
    fks = [(t.name, fk.cols, fk.ref_table) for t in d.db_schema.tables for fk in t.foreign_keys]
    assert fks == [("staffing", ["institution_name"], "institution")]
    assert d.ask.declared == ["staffing.institution_name -> institution.name"]
    sql_prompt = next(p for p in model.prompts if p.startswith("Write one DuckDB SELECT"))
    assert "REFERENCES institution" in sql_prompt
    assert [s.stage for s in d.sql] == ["ok"]                  # no repair spent
    assert any("joined on its declared foreign key: LEFT JOIN staffing" in f
               for f in a.trace.fallbacks)
    tables = {s.table for s in d.result.sources[0]}
    assert tables == {"institution", "staffing"}
