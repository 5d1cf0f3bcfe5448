"""The record an evaluation run writes per question, and the reader of a results file.

:class:`ResultRecord` is the one shape of a line of ``results.jsonl``: the runner writes
``record.model_dump_json()``, and ``report``, resume and ``benchmarks/reproduce.py`` read
lines back through it. Key names are those the runner has always written, so files from
older quaderno versions load: keys added later (``context``, ``eval_calls``, ``details``, ``gate``)
read as their defaults. ``details`` is the answer's typed per-method record
(:data:`~quaderno.methods.details.MethodDetails`), serialized with its ``kind`` and read back
as the same model.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pydantic import (BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler,
                      ValidationError, model_serializer)

from quaderno.errors import InputFormatError
from quaderno.gate.decision import GateDecision
from quaderno.methods.details import MethodDetails

log = logging.getLogger(__name__)


class _Keyed(BaseModel):
    """``record["key"]`` reads field ``key``, for code written when records were dicts."""

    model_config = ConfigDict(frozen=True)

    def __getitem__(self, key: str) -> Any:
        if key not in type(self).model_fields:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in type(self).model_fields else default


class EvalCost(_Keyed):
    """What measuring an answer cost (judges, DIG): kept apart from the method's cost."""

    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    llm_seconds: float


class ResultRecord(_Keyed):
    """One evaluated question: the gold, the prediction, its metrics and the method's cost."""

    id: str
    question: str
    answers: list[str]
    prediction: str
    method: str
    metrics: dict[str, float]
    retrieval_rounds: list[list[str]] = Field(default_factory=list)
    page: str | None = None  # PAGER's page, rendered as the LLM saw it
    context: str = ""  # what the final answer was generated from (empty in runs before DIG)
    llm_calls: int
    cached_calls: int = 0
    prompt_tokens: int
    completion_tokens: int
    fallbacks: list[str] = Field(default_factory=list)
    latency_s: float
    eval_calls: EvalCost | None = None  # None: nothing was measured with an LLM
    details: MethodDetails | None = None
    gate: GateDecision | None = None  # the retrieve-or-not gate's decision (runs with --gate)

    @model_serializer(mode="wrap")
    def _without_absent_gate(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # a run without a gate writes the lines it always wrote
        data = handler(self)
        if isinstance(data, dict) and data.get("gate", 0) is None:
            del data["gate"]
        return data


def read_results(path: Path) -> list[ResultRecord]:
    """Complete records of a results file; a torn last line (a killed writer) is cut off and
    a line that is not JSON is ignored with a warning. A JSON line that is not a result
    record is an InputFormatError naming the file, line and field."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    good_end = raw.rfind(b"\n") + 1
    if good_end < len(raw):
        log.warning("%s ends with a partial record; removing it", path)
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
        raw = raw[:good_end]
    records = []
    for n, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            log.warning("%s line %d is not JSON; ignored", path, n)
            continue
        try:
            records.append(ResultRecord.model_validate(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise InputFormatError(
                f"not a result record ({first['msg']}); delete the line to re-run that "
                "question", path=str(path), line=n,
                field=".".join(map(str, first["loc"])) or None) from None
    return records
