"""An invented key is numbered per chunk before the tables are queried (scoped_ids.py): a
join on it pairs only the rows one chunk wrote; a number every chunk using it states keeps
one meaning; a merged row is each agreeing chunk's number; nothing changes where no number
is used by two chunks."""

from __future__ import annotations

import json

import pytest

from docsage_fakes import row, schema_of
from quaderno.methods.docsage.aliases import merge_entities
from quaderno.methods.docsage.rows import Correction, noted
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.scoped_ids import scope_invented_keys, whole_number
from test_docsage_method import FACT, Model, answer

# the held-out Set2 failure's shape: a table of companies keyed by an id no chunk states,
# and memberships holding that id
DRAFT = {"tables": [
    {"name": "company", "columns": [{"name": "id", "type": "INT"},
                                    {"name": "employees", "type": "INT"}],
     "primary_key": ["id"]},
    {"name": "membership", "columns": [{"name": "id", "type": "INT"},
                                       {"name": "company_id", "type": "INT"},
                                       {"name": "chief_executive"}],
     "primary_key": ["id"],
     "foreign_keys": [{"column": "company_id", "references_table": "company",
                       "references_column": "id"}]}]}
TEXTS = {"a": "Alpha Bank employs 500 people. Its chief executive is Ann Arl.",
         "b": "Beta Energy employs 900 people. Its chief executive is Bo Berg.",
         "c": "Gamma Holdings employs 300 people. Its chief executive is Cy Cole."}
JOIN = ("SELECT m.chief_executive, c.employees FROM company AS c JOIN membership AS m "
        "ON c.id = m.company_id ORDER BY c.employees DESC")


def _rows():
    out = []
    for chunk, (employees, ceo) in zip("abc", [(500, "Ann Arl"), (900, "Bo Berg"),
                                               (300, "Cy Cole")]):
        out += [row("company", chunk, id=1, employees=employees),
                row("membership", chunk, id=1, company_id=1, chief_executive=ceo)]
    return out


def _query(schema, rows, sql=JOIN):
    with SQLSandbox(schema, rows, isolate=False) as sandbox:
        return sandbox.run(sql).rows


def test_a_join_on_an_invented_key_pairs_only_the_rows_of_one_chunk():
    schema, rows = schema_of(DRAFT), _rows()
    # as extracted, every company is 1 and every membership holds 1: nine pairs
    assert len(_query(schema, rows)) == 9
    scoped, notes = scope_invented_keys(schema, rows, TEXTS)
    assert _query(schema, scoped) == [["Bo Berg", 900], ["Ann Arl", 500], ["Cy Cole", 300]]
    # chunk a's 1 stays 1: the cells of chunks b and c are what moved
    assert "company.id (and membership.company_id): 4 cell(s) from 2 chunk(s) numbered per " \
        "chunk, as no chunk states them; a join pairs only rows of one chunk" in notes, notes


def test_two_tables_ids_meet_only_where_one_chunk_wrote_both():
    schema = schema_of(DRAFT)
    rows = _rows()
    # the memberships listed last chunk first: one numbering for both keys, not one each
    rows = [r for r in rows if r.table == "company"] + \
        [r for r in reversed(rows) if r.table == "membership"]
    scoped, _ = scope_invented_keys(schema, rows, TEXTS)
    both = "SELECT c.employees, m.chief_executive FROM company c JOIN membership m ON c.id = m.id"
    assert sorted(_query(schema, scoped, both)) == [[300, "Cy Cole"], [500, "Ann Arl"],
                                                    [900, "Bo Berg"]]


def test_each_renumbered_cell_records_its_chunk_and_old_value():
    schema, rows = schema_of(DRAFT), _rows()
    scoped, _ = scope_invented_keys(schema, rows, TEXTS)
    changed = {(r.provenance.chunk_id, c.column, c.old, c.new, c.reason, c.by, c.evidence_chunk)
               for r in scoped for c in r.provenance.corrections}
    # numbered from 1 in the order first seen: chunk a's 1 stays 1, b's is 2, c's 3, in the
    # company, the membership and the reference alike
    assert changed == {(ch, col, 1, new, "invented-key", "chunk-scope", ch)
                       for ch, new in (("b", 2), ("c", 3)) for col in ("id", "company_id")}
    assert sum(len(r.provenance.corrections) for r in scoped) == 6
    # the rows given are not changed
    assert all(r.values["id"] == 1 and not r.provenance.corrections for r in rows)


def test_a_number_every_chunk_using_it_states_keeps_its_value():
    schema = schema_of(DRAFT)
    texts = {**TEXTS, "d": "Company no. 2, Delta Mining, employs 800 people.",
             "e": "Eve Ekker heads company no. 2."}
    rows = [*_rows(), row("company", "d", id=2, employees=800),
            row("membership", "e", id=1, company_id=2, chief_executive="Eve Ekker")]
    scoped, _ = scope_invented_keys(schema, rows, texts)
    pairs = _query(schema, scoped)
    assert ["Eve Ekker", 800] in pairs and len(pairs) == 4
    assert _query(schema, scoped, "SELECT employees FROM company WHERE id = 2") == [[800]]
    # no chunk's number of the model's became 2: the new numbers pass it
    assert sorted(r.values["id"] for r in scoped if r.table == "company") == [1, 2, 3, 4]


def test_a_number_some_chunks_mention_by_chance_is_still_the_models():
    """Two of five chunks write "1" (the key is still judged invented: most do not); their
    rows are still paired only within their chunk."""
    schema = schema_of(DRAFT)
    texts = {**TEXTS, "a": "Since 1 March, Alpha Bank employs 500 people; Ann Arl leads it.",
             "c": "Gamma Holdings, a Tier 1 lender, employs 300 people; Cy Cole leads it.",
             "d": "Delta Mining employs 200 people; Di Dorn leads it.",
             "e": "Epsilon Air employs 100 people; Ed Eng leads it."}
    rows = [*_rows(), *(r for ch, n, ceo in (("d", 200, "Di Dorn"), ("e", 100, "Ed Eng"))
                        for r in (row("company", ch, id=1, employees=n),
                                  row("membership", ch, id=1, company_id=1,
                                      chief_executive=ceo)))]
    scoped, _ = scope_invented_keys(schema, rows, texts)
    assert _query(schema, scoped) == [["Bo Berg", 900], ["Ann Arl", 500], ["Cy Cole", 300],
                                      ["Di Dorn", 200], ["Ed Eng", 100]]


def _named_schema(keyed: bool = True):
    """DRAFT with the company's name column; keyed by its id, or by nothing."""
    draft = json.loads(json.dumps(DRAFT))
    draft["tables"][0]["columns"].insert(1, {"name": "name"})
    if not keyed:
        draft["tables"][0]["primary_key"] = []
    return schema_of(draft)


MERGE_TEXTS = {"a": "Alpha Bank employs 500 people.", "b": "Alpha Bank is led by Bo Berg.",
               "c": "Gamma Holdings employs 300 people; Cy Cole leads it."}


def _merged_alpha(schema, written_in_b=1):
    """Alpha Bank read in chunks a and b (b writing its id as ``written_in_b``) and merged;
    Gamma Holdings in c; memberships of b and c holding 1."""
    return merge_entities(schema, [
        row("company", "a", id=1, name="Alpha Bank", employees=500),
        row("company", "b", id=written_in_b, name="Alpha Bank"),
        row("company", "c", id=1, name="Gamma Holdings", employees=300),
        row("membership", "b", id=1, company_id=1, chief_executive="Bo Berg"),
        row("membership", "c", id=1, company_id=1, chief_executive="Cy Cole")],
        None, MERGE_TEXTS)


def test_a_merged_row_is_what_each_merged_chunks_number_meant():
    schema = _named_schema()
    rows = _merged_alpha(schema)
    # the merged row records that chunk b gave the entity the same id (and name)
    assert [r.provenance.agreed for r in rows if r.table == "company"] == [
        {"id": {"b": 1}, "name": {"b": "Alpha Bank"}}, {}]
    scoped, _ = scope_invented_keys(schema, rows, MERGE_TEXTS)
    assert _query(schema, scoped) == [["Bo Berg", 500], ["Cy Cole", 300]]


PEOPLE = {"tables": [
    {"name": "person", "columns": [{"name": "id", "type": "INT"}, {"name": "name"}],
     "primary_key": ["id"]},
    {"name": "company", "columns": [{"name": "id", "type": "INT"}, {"name": "title"}],
     "primary_key": ["id"]},
    {"name": "job", "columns": [{"name": "id", "type": "INT"},
                                {"name": "person_id", "type": "INT"},
                                {"name": "company_id", "type": "INT"}],
     "primary_key": ["id"],
     "foreign_keys": [{"column": "person_id", "references_table": "person",
                       "references_column": "id"},
                      {"column": "company_id", "references_table": "company",
                       "references_column": "id"}]}]}


def test_a_merged_rows_own_chunk_keeps_its_claim_when_a_merged_correction_moves_it():
    """Chunk b's Alpha Bank brings a committee fix of its id (evidence b) that the merged
    row keeps: the id's chunk becomes b, and chunk a's 1 is still the row's."""
    schema = _named_schema()
    texts = {"a": "Alpha Bank employs 500 people; Ann Arl leads it.",
             "b": "Alpha Bank is led by Bo Berg.",
             "c": "Gamma Holdings employs 300 people; Cy Cole leads it."}
    fixed = noted(row("company", "b", id=1, name="Alpha Bank"),
                  [Correction(column="id", old=3, new=1, reason="low-confidence",
                              by="committee", evidence_chunk="b")])
    rows = merge_entities(schema, [
        row("company", "a", id=1, name="Alpha Bank", employees=500), fixed,
        row("company", "c", id=1, name="Gamma Holdings", employees=300),
        *(row("membership", ch, id=1, company_id=1, chief_executive=ceo)
          for ch, ceo in (("a", "Ann Arl"), ("b", "Bo Berg"), ("c", "Cy Cole")))], None, texts)
    assert rows[0].provenance.agreed["id"] == {"a": 1}
    scoped, _ = scope_invented_keys(schema, rows, texts)
    assert sorted(_query(schema, scoped)) == [["Ann Arl", 500], ["Bo Berg", 500],
                                              ["Cy Cole", 300]]


@pytest.mark.parametrize("written", ["1", 1.0, " 1", "1.0"])
def test_the_same_number_written_otherwise_is_agreed(written):
    schema = _named_schema()
    rows = _merged_alpha(schema, written)
    assert rows[0].provenance.agreed["id"] == {"b": written}
    scoped, _ = scope_invented_keys(schema, rows, MERGE_TEXTS)
    assert _query(schema, scoped) == [["Bo Berg", 500], ["Cy Cole", 300]]


def test_a_merged_rows_number_changed_later_claims_nothing():
    """A correction after the merge gives chunk a's Alpha Bank the number 2, which chunk b
    gave Beta Energy: chunk b's 2 is still Beta's, not the merged row's."""
    schema = _named_schema()
    texts = {"a": "Alpha Bank employs 500 people.",
             "b": "Alpha Bank is older than Beta Energy, which employs 900 people and is led "
                  "by Bo Berg.",
             "c": "Gamma Holdings employs 300 people; Cy Cole leads it."}
    rows = merge_entities(schema, [
        row("company", "a", id=1, name="Alpha Bank", employees=500),
        row("company", "b", id=1, name="Alpha Bank"),
        row("company", "b", id=2, name="Beta Energy", employees=900),
        row("company", "c", id=1, name="Gamma Holdings", employees=300),
        row("membership", "b", id=1, company_id=2, chief_executive="Bo Berg"),
        row("membership", "c", id=1, company_id=1, chief_executive="Cy Cole")], None, texts)
    assert rows[0].provenance.agreed["id"] == {"b": 1}
    rows[0] = noted(rows[0], [], {**rows[0].values, "id": 2})
    scoped, _ = scope_invented_keys(schema, rows, texts)
    assert _query(schema, scoped) == [["Bo Berg", 900], ["Cy Cole", 300]]


@pytest.mark.parametrize("order", [["person", "company", "job"], ["company", "person", "job"]])
def test_one_keys_merged_row_leaves_another_keys_numbers_apart(order):
    """Ann is 1 in chunks a and b and is merged; company 1 is Alpha in chunk a and Beta in
    chunk b: a job of chunk b is Ann's at Beta, whichever table the schema lists first."""
    draft = {"tables": sorted(PEOPLE["tables"], key=lambda t: order.index(t["name"]))}
    schema = schema_of(draft)
    texts = {"a": "Ann Arl works at Alpha Bank.", "b": "Ann Arl works at Beta Energy.",
             "c": "Cy Cole works at Gamma Holdings."}
    people = merge_entities(schema, [row("person", ch, id=1, name=n)
                                     for ch, n in (("a", "Ann Arl"), ("b", "Ann Arl"),
                                                   ("c", "Cy Cole"))], None, texts)
    rows = [*people, *(row("company", ch, id=1, title=t) for ch, t in
                       (("a", "Alpha Bank"), ("b", "Beta Energy"), ("c", "Gamma Holdings"))),
            *(row("job", ch, id=1, person_id=1, company_id=1) for ch in "abc")]
    scoped, _ = scope_invented_keys(schema, rows, texts)
    sql = ("SELECT p.name, c.title FROM job j JOIN person p ON p.id = j.person_id "
           "JOIN company c ON c.id = j.company_id ORDER BY c.title")
    assert _query(schema, scoped, sql) == [["Ann Arl", "Alpha Bank"], ["Ann Arl", "Beta Energy"],
                                           ["Cy Cole", "Gamma Holdings"]]


def test_a_row_merged_without_the_number_claims_none():
    """Chunk b names Alpha Bank without an id, and numbers Beta Energy 1: merged into chunk a's
    Alpha Bank, its row does not make b's 1 Alpha's."""
    schema = _named_schema(keyed=False)
    texts = {"a": "Alpha Bank employs 500 people; Ann Arl leads it.",
             "b": "Beta Energy employs 900 people; Bo Berg leads it. Alpha Bank is older.",
             "c": "Gamma Holdings employs 300 people; Cy Cole leads it."}
    rows = merge_entities(schema, [
        row("company", "a", id=1, name="Alpha Bank", employees=500),
        row("company", "b", id=1, name="Beta Energy", employees=900),
        row("company", "b", id=None, name="Alpha Bank"),
        row("company", "c", id=1, name="Gamma Holdings", employees=300),
        *(row("membership", ch, id=1, company_id=1, chief_executive=ceo)
          for ch, ceo in (("a", "Ann Arl"), ("b", "Bo Berg"), ("c", "Cy Cole")))], None, texts)
    assert rows[0].provenance.agreed == {"name": {"b": "Alpha Bank"}}
    scoped, _ = scope_invented_keys(schema, rows, texts)
    assert _query(schema, scoped) == [["Bo Berg", 900], ["Ann Arl", 500], ["Cy Cole", 300]]


def test_a_number_one_chunk_uses_and_mentions_by_chance_is_renumbered():
    """Chunk b's institution 2 and chunk d's staffing 2: each chunk alone uses 2, and b writes
    "2 campuses"; kept, the two would meet across chunks."""
    schema = schema_of(INSTITUTIONS)
    texts = {"a": "Aldora Institute was founded in 1874.",
             "b": "Brevik College, founded in 1902, has 2 campuses.",
             "c": "Corvan Academy was founded in 1921.",
             "d": "Dunmere School has 30 staff."}
    rows = [row("institution", "a", id=1, founded=1874),
            row("institution", "b", id=2, founded=1902),
            row("institution", "c", id=1, founded=1921),
            row("staffing", "d", id=2, staff=30)]
    scoped, _ = scope_invented_keys(schema, rows, texts)
    sql = "SELECT i.founded, s.staff FROM institution i JOIN staffing s ON i.id = s.id"
    assert _query(schema, scoped, sql) == []


def test_new_numbers_stay_small_beside_a_long_shared_id():
    """A 19-digit registry number both chunks state is kept, and new numbers are counted from
    1, not from past it (past BIGINT, an INT id would load as NULL)."""
    schema = schema_of(DRAFT)
    big = 9_000_000_000_000_000_001
    texts = {**TEXTS, "d": f"Registry {big}: Delta Mining employs 800 people.",
             "e": f"Eve Ekker heads the company of registry {big}."}
    rows = [*_rows(), row("company", "d", id=big, employees=800),
            row("membership", "e", id=1, company_id=big, chief_executive="Eve Ekker")]
    scoped, _ = scope_invented_keys(schema, rows, texts)
    assert sorted(r.values["id"] for r in scoped if r.table == "company") == [1, 2, 3, big]
    assert len(_query(schema, scoped)) == 4


def test_an_id_written_as_a_decimal_is_numbered_with_its_chunk():
    schema = schema_of(DRAFT)
    rows = _rows()
    rows[3] = row("membership", "b", id=1, company_id="1.0", chief_executive="Bo Berg")
    scoped, _ = scope_invented_keys(schema, rows, TEXTS)
    assert _query(schema, scoped) == [["Bo Berg", 900], ["Ann Arl", 500], ["Cy Cole", 300]]


def test_when_one_key_is_renumbered_every_key_is():
    """staffing's numbers are all chunk b's, so it alone would need nothing; left as it is,
    its 1 would meet the new number of another chunk's institution."""
    schema = schema_of(INSTITUTIONS)
    texts = {"a": "Aldora Institute was founded in 1874.",
             "b": "Brevik College was founded in 1902 and has 1,150 staff.",
             "c": "Corvan Academy was founded in 1921."}
    rows = [row("institution", ch, id=1, founded=y)
            for ch, y in (("a", 1874), ("b", 1902), ("c", 1921))]
    rows += [row("staffing", "b", id=1, staff=1150), row("staffing", "b", id=2, staff=99)]
    scoped, notes = scope_invented_keys(schema, rows, texts)
    sql = ("SELECT i.founded, s.staff FROM institution i JOIN staffing s ON i.id = s.id "
           "ORDER BY s.staff DESC")
    assert _query(schema, scoped, sql) == [[1902, 1150]]
    assert [n.split(":")[0] for n in notes] == ["institution.id", "staffing.id"]


def test_a_reference_written_as_text_meets_its_key_in_its_chunk():
    """"1" is stated in "1,500" as text, not as the whole number an id is: the key and its
    reference of one chunk are judged alike and stay together."""
    draft = json.loads(json.dumps(DRAFT))
    draft["tables"][1]["columns"][1]["type"] = "TEXT"
    schema = schema_of(draft)
    texts = {**TEXTS, "a": "Alpha Bank employs 1,500 people. Its chief executive is Ann Arl."}
    rows = [row(r.table, r.provenance.chunk_id, **{
        k: (str(v) if k == "company_id" else 1500 if v == 500 else v)
        for k, v in r.values.items()}) for r in _rows()]
    scoped, _ = scope_invented_keys(schema, rows, texts)
    assert sorted(_query(schema, scoped)) == [["Ann Arl", 1500], ["Bo Berg", 900],
                                              ["Cy Cole", 300]]


def test_only_whole_numbers_are_renumbered():
    rows = [*_rows(), row("membership", "a", id=2, company_id="Alpha Bank",
                          chief_executive="Al Ames")]
    draft = json.loads(json.dumps(DRAFT))
    draft["tables"][1]["columns"][1]["type"] = "TEXT"
    scoped, _ = scope_invented_keys(schema_of(draft), rows, TEXTS)
    assert [r.values["company_id"] for r in scoped if r.table == "membership"] == \
        ["1", "2", "3", "Alpha Bank"]
    assert [c.column for c in scoped[-1].provenance.corrections] == ["id"]


@pytest.mark.parametrize("value,number", [
    (1, 1), ("1", 1), (" 1 ", 1), (1.0, 1), ("-2", -2), (9007199254740993, 9007199254740993),
    ("9007199254740993", 9007199254740993), (True, None), (1.5, None), ("1.5", None),
    ("1,024", 1024), ("4.0", 4), ("Alpha Bank", None), ([1], None), ("", None),
    ("99999999999999999999", None)])
def test_whole_number_reads_only_what_an_id_writes(value, number):
    assert whole_number(value) == number


def test_nothing_changes_where_no_number_is_used_by_two_chunks():
    schema = schema_of(DRAFT)
    rows = [row("company", "a", id=1, employees=500), row("company", "a", id=2, employees=900),
            row("membership", "a", id=1, company_id=2, chief_executive="Ann Arl"),
            row("membership", "a", id=2, company_id=1, chief_executive="Bo Berg")]
    scoped, notes = scope_invented_keys(schema, rows, TEXTS)
    assert scoped == rows and notes == []


def test_a_key_the_chunks_state_is_left_alone():
    schema = schema_of(DRAFT)
    texts = {c: f"Company {i} employs 100 people. Membership {i} is held by Ann Arl."
             for c, i in (("a", 1), ("b", 1), ("c", 1))}
    rows = _rows()
    assert scope_invented_keys(schema, rows, texts) == (rows, [])


def test_a_text_id_keeps_its_type():
    draft = json.loads(json.dumps(DRAFT))
    for t in draft["tables"]:
        for c in t["columns"]:
            if c["name"] in ("id", "company_id"):
                c["type"] = "TEXT"
    schema = schema_of(draft)
    rows = [row(r.table, r.provenance.chunk_id,
                **{k: (str(v) if k in ("id", "company_id") else v) for k, v in r.values.items()})
            for r in _rows()]
    scoped, _ = scope_invented_keys(schema, rows, TEXTS)
    assert {r.values["id"] for r in scoped} == {"1", "2", "3"}
    assert _query(schema, scoped)[0] == ["Bo Berg", 900]


INSTITUTIONS = {"tables": [
    {"name": "institution", "columns": [{"name": "id", "type": "INT"},
                                        {"name": "founded", "type": "INT"}],
     "primary_key": ["id"]},
    {"name": "staffing", "columns": [{"name": "id", "type": "INT"},
                                     {"name": "staff", "type": "INT"}],
     "primary_key": ["id"]}],
    "entity_types": ["institution"], "required_attributes": ["institution.founded"]}


class Numbering(Model):
    """Drafts two tables keyed by a number and numbers each chunk's rows from 1, as the
    measuring model does; the query joins the two numbers."""

    def __call__(self, request):
        user = request.messages[-1].content
        if user.startswith(("Design the smallest", "Revise this relational schema")):
            self.prompts.append(user)
            return json.dumps(INSTITUTIONS)
        if user.startswith("Extract into the tables below"):
            self.prompts.append(user)
            found = list(FACT.finditer(user.split('"""')[1]))
            return json.dumps({
                "institution": [{"id": i + 1, "founded": int(m[2])}
                                for i, m in enumerate(found)],
                "staffing": [{"id": i + 1, "staff": int(m[3].replace(",", ""))}
                             for i, m in enumerate(found)]})
        return super().__call__(request)


def test_docsage_queries_the_keys_numbered_per_chunk(tmp_path):
    """End to end (passive ASK keeps the drafted ids): the join of the two numbers pairs each
    institution with its own staff, and the run's record says so."""
    model = Numbering(sql="SELECT i.founded, s.staff FROM institution AS i "
                          "JOIN staffing AS s ON i.id = s.id ORDER BY s.staff DESC")
    a = answer("docsage-passive", model, tmp_path,
               question="When was the institution with the most staff founded?")
    d = a.details
    assert d.result.rows == [[1874, 2300], [1902, 1150], [1921, 640]]
    assert a.answer.startswith("1874")
    assert [n.split(":")[0] for n in d.scoped_keys] == ["institution.id", "staffing.id"] or \
        [n.split(":")[0] for n in d.scoped_keys] == ["staffing.id", "institution.id"]
    assert sorted(r["id"] for r in d.tables["institution"]) == [1, 2, 3]
    assert any(f.startswith("invented key numbered per chunk: institution.id")
               for f in a.trace.fallbacks)
