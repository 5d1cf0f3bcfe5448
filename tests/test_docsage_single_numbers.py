"""A number marked multi-valued in a table that says nothing of when is one value per
entity (the measuring model's Set2 companies: two revenues of one company made two rows,
neither merged nor checked)."""

from __future__ import annotations

from quaderno.methods.docsage.ask import _drafted
from quaderno.methods.docsage.draft import SchemaDraft
from quaderno.methods.docsage.single_numbers import single_numbers

# docsage-references-set2's companies, as the model marked them
COMPANIES = {"name": "companies", "primary_key": ["company_name"], "columns": [
    {"name": "company_name"}, {"name": "sector", "single_valued": False},
    {"name": "employees", "type": "INT", "single_valued": False},
    {"name": "revenue", "type": "DOUBLE", "single_valued": False},
    {"name": "products", "single_valued": False}]}


def test_numbers_of_an_entity_table_without_a_time_column_are_one_value_each() -> None:
    schema, notes = _drafted(SchemaDraft.model_validate({"tables": [COMPANIES]}))
    table = schema.table("companies")
    assert {c.name for c in table.columns if not c.single_valued} == {"sector", "products"}
    assert notes == ["table 'companies': employees, revenue marked single-valued: one number "
                     "per entity, since no column says when"]


def test_a_column_saying_when_or_a_composite_key_keeps_the_marks() -> None:
    yearly = {**COMPANIES, "columns": [*COMPANIES["columns"],
                                       {"name": "fiscal_year", "type": "INT"}]}
    dated = {**COMPANIES, "columns": [*COMPANIES["columns"],
                                      {"name": "reported", "type": "DATE"}]}
    keyed = {**COMPANIES, "primary_key": ["company_name", "sector"]}
    for table in (yearly, dated, keyed):
        draft, notes = single_numbers(SchemaDraft.model_validate({"tables": [table]}))
        assert notes == []
        assert not draft.tables[0].columns[2].single_valued      # employees
