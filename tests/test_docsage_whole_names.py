"""A person's name the model split into first and last name is one column again, so that an
invented key can be moved to it (the 1.5B measuring model's Set1 Statistics schema, where
the split left ASK nothing to re-key ``laureates`` by and the question's join matched
nothing)."""

from __future__ import annotations

from docsage_fakes import row, schema_of
from quaderno.methods.docsage.ask import _drafted
from quaderno.methods.docsage.invented import invented_keys
from quaderno.methods.docsage.draft import SchemaDraft
from quaderno.methods.docsage.patch import apply_patches
from quaderno.methods.docsage.whole_names import whole_names

# benchmarks/results/docsage-synth-measuring/docsage-set1, the Statistics question's draft
SET1 = {"tables": [
    {"name": "stedrurial_medal", "columns": [{"name": "laureate_id", "type": "INT"},
                                             {"name": "award_name"},
                                             {"name": "year", "type": "INT"}]},
    {"name": "laureates", "columns": [{"name": "laureate_id", "type": "INT"},
                                      {"name": "First Name"}, {"name": "last_name"},
                                      {"name": "nationality"},
                                      {"name": "birth_year", "type": "INT"}]}],
    "required_attributes": ["laureates.birth_year", "laureates.first_name",
                            "laureates.last_name"]}

TEXTS = {
    "d1": "Systhou Vhyrnbraex, born 1970, is a Kraxryndian laureate of the Stedrurial Medal.",
    "d2": "Gryrnstu Pougryrn (born 1984) received the Stedrurial Medal in 2015.",
}


def test_the_split_name_is_one_column_and_the_invented_key_moves_to_it():
    schema, notes = _drafted(SchemaDraft.model_validate(SET1))
    laureates = schema.table("laureates")
    assert laureates.column_names == ["laureate_id", "name", "nationality", "birth_year"]
    assert notes == ["table 'laureates': First Name and last_name made one column, name "
                     "(the documents name a person in one piece)"]
    assert "laureates.name" in schema.requirements.attributes
    assert not any(a.endswith("_name") for a in schema.requirements.attributes
                   if a.startswith("laureates."))
    # the trial rows as the model would extract them now: the id numbered, the name stated
    rows = [row("laureates", "d1", laureate_id=1, name="Systhou Vhyrnbraex",
                nationality="Kraxryndia", birth_year=1970),
            row("laureates", "d2", laureate_id=1, name="Gryrnstu Pougryrn", birth_year=1984)]
    [signal] = [s for s in invented_keys(schema, rows, TEXTS) if s.table == "laureates"]
    assert signal.fix.op == "rekey" and signal.fix.column == "name"
    rekeyed, _ = apply_patches(schema, [signal.fix])
    assert rekeyed.table("laureates").primary_key == ["name"]
    # split, as the run had it: the invented key is found and nothing can key the table
    split = schema_of(SET1)
    assert "name" not in split.table("laureates").column_names
    split_rows = [row("laureates", r.provenance.chunk_id, laureate_id=1,
                      first_name=r.values["name"].split()[0],
                      last_name=r.values["name"].split()[1]) for r in rows]
    assert [(s.table, s.column, s.fix) for s in invented_keys(split, split_rows, TEXTS)] == [
        ("laureates", "laureate_id", None)]


def test_keys_references_and_constraints_follow_the_merged_name():
    draft = SchemaDraft.model_validate({"tables": [
        {"name": "people", "columns": [{"name": "firstname"}, {"name": "surname"},
                                       {"name": "born", "type": "INT"}],
         "primary_key": ["firstname", "surname"]},
        {"name": "awards", "columns": [{"name": "winner_first"}, {"name": "winner_last"},
                                       {"name": "year", "type": "INT"}],
         "foreign_keys": [{"column": "winner_first", "references_table": "people",
                           "references_column": "firstname"},
                          {"column": "winner_last", "references_table": "People",
                           "references_column": "surname"}]}],
        "constraints": [{"kind": "functional_dependency", "table": "people",
                         "columns": ["firstname", "surname", "born"]}],
        "required_attributes": ["people.firstname", "people.surname", "people.born"]})
    merged, notes = whole_names(draft)
    people = merged.tables[0]
    assert [c.name for c in people.columns] == ["name", "born"]
    assert people.primary_key == ["name"]
    assert [(f.column, f.references_column) for f in merged.tables[1].foreign_keys] == [
        ("winner_first", "name"), ("winner_last", "name")]
    assert merged.constraints[0].columns == ["name", "born"]
    assert merged.required_attributes == ["people.name", "people.born"]
    assert len(notes) == 1
    assert draft.tables[0].columns[0].name == "firstname"     # the draft itself is kept


def test_a_table_with_a_name_or_an_odd_pair_is_left_as_it_is():
    for columns in (
            [{"name": "laureate_name"}, {"name": "first_name"}, {"name": "last_name"}],
            [{"name": "full_name"}, {"name": "first_name"}, {"name": "last_name"}],
            [{"name": "first_name"}, {"name": "last_name", "type": "INT"}],
            [{"name": "first_name", "single_valued": False}, {"name": "last_name"}],
            [{"name": "first_name"}, {"name": "nationality"}]):
        draft = SchemaDraft.model_validate({"tables": [{"name": "laureates",
                                                        "columns": columns}]})
        merged, notes = whole_names(draft)
        assert merged == draft and notes == [], columns
