"""An invented key is numbered per chunk before the tables are queried (scoped_ids.py): a
join on it pairs only the rows one chunk wrote; a number a chunk states keeps one meaning;
nothing changes where no number is used by two chunks."""

from __future__ import annotations

import json

from docsage_fakes import row, schema_of
from quaderno.methods.docsage.rows import value_chunk
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.scoped_ids import scope_invented_keys
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
    assert any(n.startswith("company.id (and membership.company_id): no chunk states it, "
                            "and 1 number(s) stood for 3 things") for n in notes), notes


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
    changed = [(r.provenance.chunk_id, c.column, c.old, c.new, c.reason, c.evidence_chunk)
               for r in scoped for c in r.provenance.corrections]
    # the first chunk's 1 stays 1; the others' become new numbers, each naming its chunk
    assert ("b", "company_id", 1, 2, "invented-key", "b") in changed
    assert ("c", "id", 1, 3, "invented-key", "c") in changed
    assert not any(chunk == "a" for chunk, *_ in changed)
    # the value still leads to the chunk it came from
    assert all(value_chunk(r.provenance.chunk_id, r.provenance.corrections, "id")
               == r.provenance.chunk_id for r in scoped)
    # the rows given are not changed
    assert all(r.values["id"] == 1 and not r.provenance.corrections for r in rows)


def test_a_number_its_chunk_states_keeps_one_meaning_across_chunks():
    schema = schema_of(DRAFT)
    texts = {**TEXTS, "d": "Company no. 7, Delta Mining, employs 800 people.",
             "e": "Eve Ekker heads company no. 7."}
    rows = [*_rows(), row("company", "d", id=7, employees=800),
            row("membership", "e", id=1, company_id=7, chief_executive="Eve Ekker")]
    scoped, _ = scope_invented_keys(schema, rows, texts)
    pairs = _query(schema, scoped)
    assert ["Eve Ekker", 800] in pairs and len(pairs) == 4


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
