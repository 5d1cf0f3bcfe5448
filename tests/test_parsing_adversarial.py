"""Every parser, on 200+ malformed or adversarial replies: a valid value or a ParseError."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from quaderno.errors import ParseError
from quaderno.llm.parsing import extract_tag, parse_json_object, parse_model, parse_outline

RECORDS = [json.loads(line) for line in
           (__import__("pathlib").Path(__file__).parent / "data" / "adversarial_outputs.jsonl")
           .read_text(encoding="utf-8").splitlines()]


class Answer(BaseModel):
    answer: str
    confidence: float


def test_corpus_is_large_and_varied():
    assert len(RECORDS) >= 200
    assert len({r["category"] for r in RECORDS}) >= 20


@pytest.mark.parametrize("rec", RECORDS, ids=lambda r: f"{r['id']}-{r['category']}")
def test_parsers_never_raise_anything_but_parse_error(rec):
    text = rec["text"]
    for parser in (parse_json_object, lambda t: parse_model(t, Answer),
                   lambda t: extract_tag(t, "answer"), parse_outline):
        try:
            value = parser(text)
        except ParseError as exc:
            assert str(exc)  # the message is what the repair re-ask shows the model
            continue
        assert value is not None
    if rec["json"] is not None:
        assert parse_json_object(text) == rec["json"]


@pytest.mark.parametrize("rec", [r for r in RECORDS if r["category"] == "answer_tag"],
                         ids=lambda r: str(r["id"]))
def test_answer_tags(rec):
    if rec["answer"] is None:
        with pytest.raises(ParseError):
            extract_tag(rec["text"], "answer")
    else:
        assert extract_tag(rec["text"], "answer") == rec["answer"]


@pytest.mark.parametrize("rec", [r for r in RECORDS if r["category"] == "outline"],
                         ids=lambda r: str(r["id"]))
def test_outlines(rec):
    if rec["outline"] is None:
        with pytest.raises(ParseError):
            parse_outline(rec["text"])
        return
    outline = parse_outline(rec["text"])
    title, sections = rec["outline"]
    assert outline.title == title
    assert [s.title for s in outline.sections] == sections


def test_model_parse_maps_key_case_and_reports_fields():
    assert parse_model('{"Answer": "Paris", "Confidence": 0.5}', Answer).answer == "Paris"
    with pytest.raises(ParseError, match="confidence"):
        parse_model('{"answer": "Paris"}', Answer)
    with pytest.raises(ParseError, match="expected text"):
        parse_json_object(None)  # type: ignore[arg-type]
