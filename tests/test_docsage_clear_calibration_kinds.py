"""A calibration records the score kind and model it holds for, and is never applied to
confidences on another scale (issue 11 review)."""

from __future__ import annotations

import asyncio
import math

import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.llm.types import ChatRequest, ChatResponse, TokenLogprob
from quaderno.methods.docsage.calibrate import label_rows
from quaderno.methods.docsage.clear import ClearConfig, run_clear
from quaderno.methods.docsage.confidence import Calibration, LabelledCell, calibrate
from quaderno.methods.docsage.extract import ExtractionSettings, all_rows, extract
from quaderno.methods.docsage.schema import Schema

SCHEMA = Schema.model_validate({"tables": [
    {"name": "company", "primary_key": ["name"],
     "columns": [{"name": "name"}, {"name": "founded", "type": "INT"}]}]})
PIECES = [('{"company": [{"name": "', -0.01), ("Acme", -0.05), ('", "founded": ', -0.01),
          ("1874", -0.1), ("}]}", -0.01)]
CHUNKS = [Chunk(id="d#0", text="Acme, 1874.")]


class TokenLLM:
    model_id = "fake:tokens"
    supports_schema = True
    supports_grammar = False

    def __init__(self, send_logprobs: bool = True) -> None:
        self.send = send_logprobs

    async def achat(self, request: ChatRequest) -> ChatResponse:
        lps = [TokenLogprob(token=t, logprob=lp) for t, lp in PIECES]
        return ChatResponse(text="".join(t for t, _ in PIECES), model=self.model_id,
                            logprobs=lps if request.logprobs and self.send else None)


def test_each_value_records_the_score_kind_that_produced_it() -> None:
    lp = all_rows(asyncio.run(extract(LM(TokenLLM()), CHUNKS, SCHEMA)))[0]
    assert lp.provenance.confidence_kind == {"name": "logprobs", "founded": "logprobs"}
    assert lp.provenance.confidence["founded"] == pytest.approx(math.exp(-0.1))
    # auto mode without log-probabilities: sample agreement, recorded as such
    agreed = all_rows(asyncio.run(extract(LM(TokenLLM(send_logprobs=False)), CHUNKS,
                                          SCHEMA)))[0]
    assert agreed.provenance.confidence_kind == {"name": "samples", "founded": "samples"}
    cells = label_rows(SCHEMA.tables[0], [lp], {"Acme": {"founded": 1874}})
    assert [c.kind for c in cells] == ["logprobs"]


def test_calibrate_records_kind_and_model_and_never_pools_two_scales() -> None:
    cells = [LabelledCell(confidence=0.1 * i, correct=False, kind="logprobs")
             for i in range(1, 10)]
    cells += [LabelledCell(confidence=0.99, correct=False, kind="samples")] * 3
    cal = calibrate(cells, 0.5, source="t", model="m1")
    assert (cal.score_kind, cal.model, cal.n_cells) == ("logprobs", "m1", 9)
    assert cal.tau_low == pytest.approx(0.5)
    assert cal.mismatch("samples", "m1") is not None
    assert cal.mismatch("logprobs", "m2") is not None
    assert cal.mismatch("logprobs", "m1") is None
    assert Calibration(tau_low=0.5).mismatch("samples", "m2") is None   # older: unknown


def _level_a(cal: Calibration) -> tuple[int, list[str]]:
    trace = Trace()
    result = asyncio.run(run_clear(LM(TokenLLM()), SCHEMA, CHUNKS, calibration=cal,
                                   config=ClearConfig(correction=False, level_b=False),
                                   settings=ExtractionSettings(confidence="logprobs"),
                                   trace=trace))
    return result.report.cells_flagged, trace.fallbacks


def test_a_calibration_of_another_kind_or_model_is_refused_not_compared() -> None:
    # a threshold of 0.99 on sample agreement would flag every token-probability value
    flagged, fallbacks = _level_a(Calibration(tau_low=0.99, score_kind="samples",
                                              model="fake:tokens", source="s"))
    assert flagged == 0                      # the default 0.5 was used instead
    assert any("for samples confidences, not logprobs" in f for f in fallbacks)
    flagged, fallbacks = _level_a(Calibration(tau_low=0.99, score_kind="logprobs",
                                              model="other:model", source="s"))
    assert flagged == 0 and any("other:model" in f for f in fallbacks)
    flagged, fallbacks = _level_a(Calibration(tau_low=0.99, score_kind="logprobs",
                                              model="fake:tokens", source="s"))
    assert flagged == 2 and not any("calibration" in f for f in fallbacks)


def test_merging_and_assembling_rows_keep_each_values_score_kind() -> None:
    from quaderno.methods.docsage.aliases import merge_entities
    from quaderno.methods.docsage.rows import Provenance, Row
    from quaderno.methods.docsage.store import join_rows

    def row(chunk: str, kind: str, **values) -> Row:
        conf = {c: 0.8 for c, v in values.items() if v is not None}
        return Row(table="company", values={"name": None, "founded": None, **values},
                   provenance=Provenance(chunk_id=chunk, confidence=conf,
                                         confidence_kind={c: kind for c in conf}))

    merged = merge_entities(SCHEMA, [row("a", "logprobs", name="Acme"),
                                     row("b", "samples", name="Acme", founded=1874)])
    assert merged[0].provenance.confidence_kind == {"name": "logprobs", "founded": "samples"}
    joined = join_rows(SCHEMA.tables[0], [([row("a", "logprobs", name="Acme")], set()),
                                          ([row("a", "samples", name="Acme", founded=1874)],
                                           {"founded"})])
    # each confidence keeps the kind of the part it came from (key cells: the last part)
    assert joined[0].provenance.confidence_kind == {"name": "samples", "founded": "samples"}


def test_a_committee_vote_share_is_recorded_as_an_agreement_score() -> None:
    from quaderno.methods.docsage.correct import apply_cell
    from quaderno.methods.docsage.rows import Provenance, Row

    r = Row(table="company", values={"name": "Acme", "founded": 1876},
            provenance=Provenance(chunk_id="a", confidence={"founded": 0.2},
                                  confidence_kind={"founded": "logprobs"}))
    fixed = apply_cell(r, "founded", 1874, reason="low-confidence", by="committee",
                       evidence_chunk="a", confidence=2 / 3)
    assert fixed.provenance.confidence["founded"] == 2 / 3
    assert fixed.provenance.confidence_kind["founded"] == "samples"
