"""What numbers a chunk states (:mod:`quaderno.methods.docsage.figures`): as written, scaled,
rounded, in words; a 0 only with a word for none; a count given only as the other kind of
thing is no count (the measuring model's invented and misread Set2 headcounts)."""

from __future__ import annotations

import pytest

from quaderno.methods.docsage.figures import number_stated
from quaderno.methods.docsage.schema import Column

TEXT = ("Rastou Bank is a company of the DMC. The company is active in the banking sector. "
        "As of 2024, Rastou Bank disclosed $63.9074 billion as annual revenue. It holds a 12% "
        "share, runs three plants, and its seat is in Vundvhaerane.")


@pytest.mark.parametrize(("value", "col", "stated"), [
    (63907400000, Column(name="revenue", type="DOUBLE", unit="USD"), True),
    (63.9074, Column(name="revenue", type="DOUBLE", unit="USD billion"), True),
    (63.9074, Column(name="revenue", type="DOUBLE"), True),          # its digits
    (63.91e9, Column(name="revenue", type="DOUBLE"), True),          # rounded, 4 digits
    (64e9, Column(name="revenue", type="DOUBLE"), False),            # 2 digits: not read so
    (0.12, Column(name="share", type="DOUBLE"), True),               # 12%
    (3, Column(name="plants", type="INT"), True),                    # "three"
    (2024, Column(name="year", type="INT"), True),
    (0, Column(name="employees", type="INT"), False),                # nothing says none
    (100, Column(name="employees", type="INT"), False),
    (200000000, Column(name="revenue", type="DOUBLE"), False),
    (4, Column(name="plants", type="INT"), False),
    ("n/a", Column(name="employees", type="INT"), True),             # no number
])
def test_a_number_is_stated_as_written_scaled_rounded_or_in_words(value, col, stated) -> None:
    assert number_stated(TEXT, value, col) is stated


@pytest.mark.parametrize(("text", "stated"), [
    ("It has no regional offices.", True),
    ("Offices: none.", True),
    ("It closed its last office and has 0 offices now.", True),
    ("Several partnerships were renewed without change. It has 3 stores.", False),
    ("The office count is not known.", False),                         # unknown, not 0
    ("It employs 40 people and has no debt.", False),
])
def test_a_zero_needs_a_word_for_none_beside_the_columns_own(text, stated) -> None:
    """docsage-rosters-set2: the committee voted 0 offices from a chunk that says nothing
    of offices ("renewed without change"), and the average came out 0."""
    assert number_stated(text, 0, Column(name="num_offices", type="INT")) is stated


@pytest.mark.parametrize(("text", "value"), [
    ("Revenue in FY2019 rose.", 2019),
    ("She finished 3rd.", 3),
    ("She finished third.", 3),
    ("Population: 1.234.567 inhabitants.", 1234567),
    ("Population 3.2m.", 3200000),
    ("It has twenty-one stores.", 21),
    ("Die Marge lag bei 12,5 %.", 0.125),
    ("c.1850 it was founded", 1850),
])
def test_numbers_other_readers_find_are_stated(text, value) -> None:
    """The review of 6438ff9: forms amounts.mentions_in does not read."""
    assert number_stated(text, value, Column(name="n", type="DOUBLE"))


@pytest.mark.parametrize(("text", "stated"), [
    ("Partnerships were renewed without change; offices in Paris.", False),
    ("Officials said nothing about it.", False),
    ("Revenue grew 0% last year; it has offices abroad.", False),
    ("It has no regional offices.", True),
    ("Offices: none.", True),
])
def test_a_zero_needs_its_none_word_before_the_column_word_in_one_clause(text, stated) -> None:
    """The review of b45b6ae: a none-word after the column word, in another clause, or a
    stray 0 stated a 0 before."""
    assert number_stated(text, 0, Column(name="offices", type="INT")) is stated


@pytest.mark.parametrize(("value", "column", "stated"), [
    (123, "employees", False),     # "Tallies of offices put Bryskound Holdings at 123"
    (123, "offices", True),
    (147830, "employees", True),
    (147830, "offices", False),
])
def test_a_count_stated_only_as_the_other_kind_is_not_stated(value, column, stated) -> None:
    """docsage-backlinks-set2: Bryskound Holdings' headcount was its 123 offices, the noun
    written before the number, where amounts.foreign does not look."""
    text = ("Bryskound Holdings names Draegre Digoth as chief executive. Tallies of offices put "
            "Bryskound Holdings at 123. Some 147830 employees are associated with the company.")
    assert number_stated(text, value, Column(name=column, type="INT")) is stated
    # a clause naming both kinds says nothing against either
    both = "It has 183 offices and 5,000 staff."
    assert number_stated(both, 183, Column(name="employees", type="INT"))


@pytest.mark.parametrize(("text", "value", "column"), [
    ("The company employs 5,000 at its three plants in Ohio.", 5000, "employees"),
    ("Across its 40 stores, the retailer employs 5,000.", 5000, "employees"),
    ("The firm, which has offices in 12 countries, employs 2,300.", 2300, "employees"),
    ("Employee count: 800, spread over 12 offices.", 800, "employees"),
    ("The bank's 300 staff serve 40 locations.", 40, "offices"),
    ("The town of 12,000 has 30 shops.", 12000, "population"),
    ("It runs training workshops for 800.", 800, "employees"),
    ("Staff numbered approx. 5,000 across 40 offices.", 5000, "employees"),
])
def test_a_clause_with_another_number_or_both_kinds_says_nothing_against_it(text, value,
                                                                           column) -> None:
    """The review of 7c339b3: the other kind's noun belonged to another number, or the
    clause names the column's kind too ("employs"), or the word was inside another one."""
    assert number_stated(text, value, Column(name=column, type="INT"))


@pytest.mark.parametrize(("text", "column", "stated"), [
    # docsage-matrix at 9506688, Set3: Gonqur's 65 square kilometres read as its population
    ("A total of sixty-five square kilometres was recorded for Gonqur.", "population", False),
    ("A total of sixty-five square kilometres was recorded for Gonqur.", "area", True),
    ("Gonqur counts sixty-five thousand residents.", "population", True),
    ("Gonqur has sixty-five offices.", "offices", True),
    # the review of b30436e: a measure column takes a measure written in words
    ("Acme's offices cover sixty-five square metres.", "office_space", True),
    ("Gonqur covers sixty-five square kilometres; 65 districts report.", "population", True),
    ("Acme runs forty-two per cent of its plants.", "offices", False),
])
def test_a_number_written_in_words_before_a_unit_of_measure_is_no_count(text, column,
                                                                       stated) -> None:
    kind = "DOUBLE" if column in ("area", "office_space") else "INT"
    assert number_stated(text, 65 if "five" in text else 42,
                         Column(name=column, type=kind)) is stated
