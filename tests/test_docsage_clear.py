"""DocSage CLEAR: extraction (0..n tuples, NULLs, spans) and Level A confidence + conformal."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random

import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.llm.types import ChatRequest, ChatResponse, TokenLogprob
from quaderno.methods.docsage import confidence as confidence_mod
from quaderno.methods.docsage.calibrate import label_rows
from quaderno.methods.docsage.confidence import (Calibration, LabelledCell, agreement_rows,
                                                 calibrate, error_coverage, json_value_spans,
                                                 logprob_confidences, token_offsets)
from quaderno.methods.docsage.extract import (ExtractionSettings, all_rows, extract,
                                              extraction_model)
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.spans import locate_span
from quaderno.methods.docsage.schema import Schema

SCHEMA = Schema.model_validate({"tables": [
    {"name": "company", "primary_key": ["name"], "description": "a company",
     "columns": [{"name": "name", "description": "company name"},
                 {"name": "founded", "type": "INT", "description": "founding year"},
                 {"name": "staff", "type": "INT", "description": "number of employees"}]}]})
NONE = ExtractionSettings(confidence="none")


def chunk(cid: str, text: str, **meta) -> Chunk:
    return Chunk(id=cid, text=text, meta=meta)


def by_text(replies: dict[str, object]):
    """A FakeLLM reply chosen by which key appears in the prompt."""
    def respond(request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        for needle, reply in replies.items():
            if needle in prompt:
                return reply if isinstance(reply, str) else json.dumps(reply)
        raise AssertionError(f"no reply for prompt {prompt[:200]!r}")
    return respond


def run(coro):
    return asyncio.run(coro)


# -- extraction ---------------------------------------------------------------------------------
def test_extracts_zero_one_and_many_tuples_per_chunk_with_provenance() -> None:
    chunks = [chunk("d0#0", "The weather was fine."),
              chunk("d1#0", "Acme was founded in 1874."),
              chunk("d2#3", "Members: Bolt (1901), Cog (1920) and Dyne (1950).")]
    fake = FakeLLM(respond=by_text({
        "weather": {"company": []},
        "Acme was": {"company": [{"name": "Acme", "founded": 1874, "staff": None}]},
        "Members:": {"company": [{"name": n, "founded": y, "staff": None}
                                 for n, y in (("Bolt", 1901), ("Cog", 1920), ("Dyne", 1950))]}}))
    results = run(extract(LM(fake), chunks, SCHEMA, NONE))
    assert [len(r.rows["company"]) for r in results] == [0, 1, 3]
    assert [r.calls for r in results] == [1, 1, 1]
    dyne = results[2].rows["company"][2]
    assert dyne.values == {"name": "Dyne", "founded": 1950, "staff": None}
    assert (dyne.provenance.doc_id, dyne.provenance.chunk_id) == ("d2", "d2#3")
    assert dyne.provenance.extractor == "fake:fake"
    # constrained decoding: the request carried the table's JSON schema
    assert all(r.json_schema is not None for r in fake.requests)


def test_values_not_stated_become_null_not_strings() -> None:
    fake = FakeLLM(respond=by_text({"Acme": {"company": [
        {"name": "Acme", "founded": "None", "staff": "not mentioned"},
        {"name": "N/A", "founded": None}, {}]}}))
    rows = all_rows(run(extract(LM(fake), [chunk("d#0", "Acme makes toys.")], SCHEMA, NONE)))
    assert [r.values for r in rows] == [{"name": "Acme", "founded": None, "staff": None}]


def test_output_model_is_typed_nullable_and_requires_every_key() -> None:
    schema = extraction_model(SCHEMA.tables).model_json_schema()
    row = schema["$defs"]["company_row"]
    assert row["required"] == ["name", "founded", "staff"]
    assert row["additionalProperties"] is False
    assert row["properties"]["founded"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]
    assert schema["required"] == ["company"]


def test_span_covers_the_entity_and_its_values_in_the_chunk() -> None:
    text = "Intro text here. Acme Corp was founded in 1874 and employs 2,300 people. Other."
    span = locate_span(text, SCHEMA.tables[0], {"name": "Acme Corp", "founded": 1874,
                                                "staff": 2300})
    assert span is not None
    assert text[span[0]:span[1]] == "Acme Corp was founded in 1874 and employs 2,300"
    assert locate_span(text, SCHEMA.tables[0], {"name": "Zeta", "founded": None,
                                                "staff": None}) is None
    fake = FakeLLM(respond=by_text({"Acme": {"company": [
        {"name": "Acme Corp", "founded": 1874, "staff": 2300}]}}))
    row = all_rows(run(extract(LM(fake), [chunk("d#0", text)], SCHEMA, NONE)))[0]
    assert text[row.provenance.char_start:row.provenance.char_end].startswith("Acme Corp")


# -- Level A: token log-probabilities -------------------------------------------------------------
class TokenLLM:
    """A backend that answers with a fixed reply split into BPE-like tokens, each with a
    given log-probability (what llama.cpp returns with logprobs)."""

    def __init__(self, pieces: list[tuple[str, float]], *, send_logprobs: bool = True) -> None:
        self.pieces = pieces
        self.send = send_logprobs
        self.model_id = "fake:tokens"
        self.supports_schema = True
        self.supports_grammar = False
        self.requests: list[ChatRequest] = []

    async def achat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        text = "".join(t for t, _ in self.pieces)
        lps = [TokenLogprob(token=t, logprob=lp) for t, lp in self.pieces]
        return ChatResponse(text=text, model=self.model_id,
                            logprobs=lps if (request.logprobs and self.send) else None)


PIECES = [('{"', -0.01), ("company", -0.01), ('":', -0.01), (' [{"', -0.01), ("name", -0.01),
          ('":', -0.01), (' "', -0.01), ("Ac", -0.2), ("me", -0.4), ('",', -0.01),
          (' "', -0.01), ("founded", -0.01), ('":', -0.01), (" 18", -1.5), ("74", -2.5),
          (",", -0.01), (' "', -0.01), ("staff", -0.01), ('":', -0.01), (" null", -0.05),
          ("}]}", -0.01)]


def test_value_spans_and_token_offsets_of_a_json_reply() -> None:
    raw = "".join(t for t, _ in PIECES)
    spans = json_value_spans("Sure! " + raw)
    assert ("company", 0, "name") in spans
    start, end = spans[("company", 0, "name")]
    assert ("Sure! " + raw)[start:end] == "Acme"
    offsets = token_offsets(raw, [TokenLogprob(token=t, logprob=lp) for t, lp in PIECES])
    assert len(offsets) == len(PIECES)
    assert "".join(raw[s:e] for s, e, _ in offsets) == raw


def test_logprob_confidence_is_exp_mean_token_logprob_of_the_value() -> None:
    raw = "".join(t for t, _ in PIECES)
    conf = logprob_confidences(raw, [TokenLogprob(token=t, logprob=lp) for t, lp in PIECES])
    # the value's characters (quotes excluded) are covered by "Ac" and "me" only
    assert conf[("company", 0, "name")] == pytest.approx(math.exp((-0.2 - 0.4) / 2))
    assert conf[("company", 0, "founded")] == pytest.approx(math.exp((-1.5 - 2.5) / 2))
    assert conf[("company", 0, "staff")] == pytest.approx(math.exp(-0.05))
    backend = TokenLLM(PIECES)
    rows = all_rows(run(extract(LM(backend), [chunk("d#0", "Acme, 1874.")], SCHEMA)))
    row = rows[0]
    assert backend.requests[0].logprobs is True and len(backend.requests) == 1
    assert row.provenance.confidence["founded"] == pytest.approx(math.exp(-2.0))
    assert row.confidence() == pytest.approx(math.exp(-2.0))   # tuple = min over fields


def test_auto_mode_falls_back_to_sample_agreement_without_logprobs() -> None:
    backend = TokenLLM(PIECES, send_logprobs=False)
    trace = Trace()
    results = run(extract(LM(backend), [chunk("d#0", "Acme, 1874.")], SCHEMA, trace=trace))
    assert len(backend.requests) == 3                      # greedy + 2 samples
    assert [r.temperature for r in backend.requests] == [0.0, 0.7, 0.7]
    assert len({r.seed for r in backend.requests[1:]}) == 2
    assert results[0].rows["company"][0].provenance.confidence["founded"] == 1.0
    assert any("sample agreement" in f for f in trace.fallbacks)


def test_sample_agreement_confidence_is_the_majority_share() -> None:
    def respond(request: ChatRequest) -> str:
        founded = 1876 if request.seed == 2 else 1874
        rows = [{"name": "Acme Inc", "founded": founded, "staff": 2300}]
        if request.seed == 1:
            rows.append({"name": "Ghost Ltd", "founded": 1999, "staff": None})
        return json.dumps({"company": rows})
    fake = FakeLLM(respond=respond)
    settings = ExtractionSettings(confidence="samples", samples=3)
    rows = all_rows(run(extract(LM(fake), [chunk("d#0", "Acme Inc: 1874")], SCHEMA, settings)))
    assert len(fake.requests) == 3
    acme, ghost = rows
    assert acme.values["founded"] == 1874
    assert acme.provenance.confidence["founded"] == pytest.approx(2 / 3)
    assert acme.provenance.confidence["name"] == 1.0
    assert ghost.provenance.confidence["name"] == pytest.approx(1 / 3)  # one sample of three


def test_agreement_rows_align_spellings_of_one_entity() -> None:
    table = SCHEMA.tables[0]
    agreed = agreement_rows([[{"name": "Acme Inc.", "founded": 1874, "staff": "2,300"}],
                             [{"name": "ACME", "founded": 1874, "staff": 2300}]], table)
    assert len(agreed) == 1
    assert agreed[0].confidence == {"name": 1.0, "founded": 1.0, "staff": 1.0}


def test_agreement_reads_a_foreign_key_as_an_entity_name() -> None:
    """Two samples naming an office's company "Acme Inc." and "ACME" agree (the same
    entity): a spelling is no reason to send the cell to the committee."""
    table = Schema.model_validate({"tables": [
        {"name": "company", "primary_key": ["name"], "columns": [{"name": "name"}]},
        {"name": "office", "primary_key": ["town"],
         "columns": [{"name": "town"}, {"name": "company"}, {"name": "manager"}],
         "foreign_keys": [{"cols": ["company"], "ref_table": "company",
                           "ref_cols": ["name"]}]}]}).table("office")
    agreed = agreement_rows([[{"town": "Zorn", "company": "Acme Inc.", "manager": "Ada"}],
                             [{"town": "Zorn", "company": "ACME", "manager": "Bo"}]], table)
    assert agreed[0].confidence == {"town": 1.0, "company": 1.0, "manager": 0.5}
    assert agreed[0].values["company"] == "Acme Inc."


# -- conformal threshold --------------------------------------------------------------------------
def _cells(rng: random.Random, n: int, error_rate: float = 0.3) -> list[LabelledCell]:
    """Cells with a known confidence distribution: wrong ones ~ Beta(2, 5), right ones
    ~ Beta(5, 2)."""
    out = []
    for _ in range(n):
        wrong = rng.random() < error_rate
        out.append(LabelledCell(confidence=rng.betavariate(2, 5) if wrong
                                else rng.betavariate(5, 2), correct=not wrong))
    return out


def _beta25_cdf(x: float) -> float:
    """P(Beta(2, 5) <= x): the exact share of wrong cells a threshold x flags."""
    return 1 - ((1 - x) ** 6 + 6 * x * (1 - x) ** 5)


def test_conformal_threshold_flags_at_least_one_minus_alpha_of_held_out_errors() -> None:
    cal = calibrate(_cells(random.Random(7), 400), alpha=0.1)
    wrong = sorted(c.confidence for c in _cells(random.Random(7), 400) if not c.correct)
    assert cal.n_errors == len(wrong) and cal.rank == math.ceil((len(wrong) + 1) * 0.9)
    assert cal.tau_low == wrong[cal.rank - 1]
    # split conformal over one labelled pool: calibrate on half, count the wrong values of
    # the held-back half that are flagged; the guarantee is on average over splits
    pool = _cells(random.Random(11), 2000)
    coverages = []
    for seed in range(400):
        order = list(range(len(pool)))
        random.Random(seed).shuffle(order)
        split = calibrate([pool[i] for i in order[:1000]], alpha=0.1)
        coverages.append(error_coverage(split, [pool[i] for i in order[1000:]]))
    assert sum(coverages) / len(coverages) >= 0.9
    # against the known error distribution (no held-out sampling noise) it holds as well
    exact = [_beta25_cdf(calibrate(_cells(random.Random(1000 + s), 400), 0.1).tau_low)
             for s in range(400)]
    assert sum(exact) / len(exact) >= 0.9
    # and the threshold is not "flag everything": most right values pass
    right = [c for c in pool if c.correct]
    assert sum(cal.flags(c.confidence) for c in right) / len(right) < 0.2


def test_too_few_wrong_cells_flag_everything_and_warn(caplog) -> None:
    cells = [LabelledCell(confidence=0.2, correct=False)] * 8 + [
        LabelledCell(confidence=0.9, correct=True)] * 50
    with caplog.at_level(logging.WARNING):
        cal = calibrate(cells, alpha=0.1)
    assert cal.tau_low is None and cal.flags(0.99)
    assert "too few" in caplog.text
    assert calibrate(cells + [LabelledCell(confidence=0.3, correct=False)], 0.1).tau_low == 0.3


def test_calibration_round_trips_through_json(tmp_path) -> None:
    cal = calibrate(_cells(random.Random(1), 300), 0.1, source="synth-train")
    cal.save(tmp_path / "cal.json")
    assert Calibration.load(tmp_path / "cal.json") == cal
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a DocSage calibration"):
        Calibration.load(tmp_path / "bad.json")


def test_label_rows_against_gold_values() -> None:
    """One labelling rule (calibrate.label_rows, alias-aware) replaces confidence.label_cells."""
    table = SCHEMA.tables[0]
    rows = [Row(table="company", values={"name": "Acme Inc.", "founded": 1874, "staff": "2,300"},
                provenance=Provenance(chunk_id="c", confidence={"name": 0.9, "founded": 0.8,
                                                                "staff": 0.4})),
            Row(table="company", values={"name": "Unknown", "founded": 1, "staff": 1},
                provenance=Provenance(chunk_id="c", confidence={"name": 0.1}))]
    cells = label_rows(table, rows, {"Acme": {"founded": 1876, "staff": 2300}})
    assert cells == [LabelledCell(confidence=0.8, correct=False),
                     LabelledCell(confidence=0.4, correct=True)]
    assert not hasattr(confidence_mod, "label_cells")


def test_extraction_empties_a_rows_own_name_in_another_column() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "chief_executive"}]}]})
    reply = json.dumps({"companies": [{"company_name": "Rastou Bank",
                                       "chief_executive": "Rastou Bank"}]})
    chunk = Chunk(id="d#0", text="Rastou Bank is a company of the commission.")
    [result] = asyncio.run(extract(LM(FakeLLM(respond=lambda r: reply)), [chunk], schema,
                                   ExtractionSettings(confidence="none")))
    [row] = result.rows["companies"]
    assert row.values == {"company_name": "Rastou Bank", "chief_executive": None}
    assert [c.reason for c in row.provenance.corrections] == ["self-copy"]
