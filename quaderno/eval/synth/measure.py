"""The ``synth_score`` evaluation measure: :func:`~.score.score` of an answer against the
gold of a synthetic question (the record's ``meta["gold"]``, as the ``synth`` dataset
format loads it). Deterministic; no LLM calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from quaderno.eval.synth.score import score

if TYPE_CHECKING:
    from quaderno.eval.datasets import QARecord
    from quaderno.llm.trace import Trace
    from quaderno.methods.answer import Answer


@dataclass(frozen=True)
class SynthScore:
    name: ClassVar[str] = "synth_score"
    title: ClassVar[str] = "synthetic-benchmark score"
    needs_judge: ClassVar[bool] = False
    needs_scoring: ClassVar[bool] = False

    @classmethod
    def build(cls, tools: Any) -> SynthScore:
        return cls()

    async def measure(self, record: QARecord, answer: Answer, *,
                      trace: Trace) -> dict[str, float]:
        gold = record.meta.get("gold")
        if not gold:
            return {}  # not a synthetic question: not measured
        value = score(gold, answer.answer)
        category = str(record.meta.get("category", "")).lower()
        return {"synth_score": value} | ({f"synth_score_{category}": value} if category else {})
