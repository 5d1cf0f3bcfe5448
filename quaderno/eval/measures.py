"""Evaluation measures: scores of an answer that cost LLM calls (judges, DIG), by name.

A :class:`Measure` scores one answer to one question and returns named numbers that land in
the record's ``metrics``; its LLM calls go to the ``trace`` it is given, which the runner
keeps apart from the method's (``eval_calls``). A measure class says whether it needs the
judge LLM or the answering LLM's scoring, so a run that cannot provide them is refused
before it starts; :meth:`build` binds it to the run's LLMs (:class:`MeasureTools`).

A run's measures are those its configuration names (``judges``, ``dig``, ``measures``)
followed by those its method's spec names (``MethodSpec.measures``). New measures register
in a :class:`MeasureRegistry` (``MEASURES.with_measures(...)`` for plug-ins and tests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Protocol

from quaderno.errors import ConfigError
from quaderno.eval.datasets import QARecord
from quaderno.eval.dig import DIGParams, information_gain
from quaderno.eval.judges import GroundTruthStore, context_recalls, representation_quality
from quaderno.eval.synth.measure import SynthScore
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.answer import Answer
from quaderno.registry import NamedRegistry


@dataclass(frozen=True)
class MeasureTools:
    """What a measure may be built with: the run's answering LLM, its judge LLM (if any),
    the DIG calibration (the run's, else the defaults) and the folder the run directories
    share (the runner's: the run directory's parent), where measures keep what every run
    there reuses, such as context recall's ground-truth statements."""

    lm: LM
    judge: LM | None = None
    dig: DIGParams = field(default_factory=DIGParams)
    shared_dir: Path | None = None


class Measure(Protocol):
    """Scores one answer; the keys it returns are metric names (``{}``: not measured)."""

    name: ClassVar[str]
    title: ClassVar[str]  # how error messages call it
    needs_judge: ClassVar[bool]  # scored by the judge LLM
    needs_scoring: ClassVar[bool]  # the answering LLM scores a given reply (LM.score)

    @classmethod
    def build(cls, tools: MeasureTools) -> Measure: ...

    async def measure(self, record: QARecord, answer: Answer, *,
                      trace: Trace) -> dict[str, float]: ...


def answer_context(answer: Answer) -> str:
    """The knowledge the answer was generated from: its context, else its documents."""
    return answer.context or "\n".join(e.text for e in answer.evidence)


def _judge(tools: MeasureTools) -> LM:
    if tools.judge is None:  # the runner refuses such a run first; this guards direct use
        raise ConfigError("a judge measure needs a judge LLM")
    return tools.judge


def is_qa_pair_text(text: str) -> bool:
    """A chunk is a QA pair when its text has the shape ``load_qa_pairs`` gives one
    (``Question: …`` then a line ``Answer: …``); anything else is a passage."""
    return text.startswith("Question: ") and "\nAnswer: " in text


@dataclass(frozen=True)
class ContextRecall:
    """The missing-knowledge paper's Eq. 4, by the judge (see :mod:`quaderno.eval.judges`).

    Metrics: ``context_recall`` over all the answer's evidence; when the evidence holds both
    QA pairs and passages, also ``context_recall_qa`` and ``context_recall_passage`` over
    each source's chunks alone, against the same ground truth (Table 3). A score the judge
    could not give (its JSON failed after a re-ask) is left out and flagged
    ``<name>_nan`` = 1, so reports count it instead of averaging it as 0."""

    judge: LM
    store: GroundTruthStore | None = None
    name: ClassVar[str] = "context_recall"
    title: ClassVar[str] = "context recall"
    needs_judge: ClassVar[bool] = True
    needs_scoring: ClassVar[bool] = False

    @classmethod
    def build(cls, tools: MeasureTools) -> ContextRecall:
        store = (GroundTruthStore(tools.shared_dir / GroundTruthStore.FILENAME)
                 if tools.shared_dir is not None else None)
        return cls(_judge(tools), store)

    async def measure(self, record: QARecord, answer: Answer, *,
                      trace: Trace) -> dict[str, float]:
        texts = [e.text for e in answer.evidence]
        sets = {"context_recall": texts}
        pairs = [t for t in texts if is_qa_pair_text(t)]
        if 0 < len(pairs) < len(texts):
            sets["context_recall_qa"] = pairs
            sets["context_recall_passage"] = [t for t in texts if not is_qa_pair_text(t)]
        scores = await context_recalls(self.judge, record.question, record.answers, sets,
                                       store=self.store, trace=trace)
        return {name: value for name, value in scores.items() if value is not None} | {
            f"{name}_nan": 1.0 for name, value in scores.items() if value is None}


@dataclass(frozen=True)
class Quality:
    """PAGER's representation quality (four dimensions, 0–5) and their average."""

    judge: LM
    name: ClassVar[str] = "quality"
    title: ClassVar[str] = "representation quality"
    needs_judge: ClassVar[bool] = True
    needs_scoring: ClassVar[bool] = False

    @classmethod
    def build(cls, tools: MeasureTools) -> Quality:
        return cls(_judge(tools))

    async def measure(self, record: QARecord, answer: Answer, *,
                      trace: Trace) -> dict[str, float]:
        quality = await representation_quality(
            self.judge, record.question, record.answers, [e.text for e in answer.evidence],
            answer_context(answer), trace=trace)
        if quality is None:
            return {}
        return ({f"quality_{k}": float(v) for k, v in quality.model_dump().items()
                 if isinstance(v, int)} | {"quality_avg": quality.average})


@dataclass(frozen=True)
class InformationGain:
    """Document information gain of the answer's context (PAGER A.3; :mod:`.dig`)."""

    lm: LM
    params: DIGParams
    name: ClassVar[str] = "dig"
    title: ClassVar[str] = "DIG"
    needs_judge: ClassVar[bool] = False
    needs_scoring: ClassVar[bool] = True

    @classmethod
    def build(cls, tools: MeasureTools) -> InformationGain:
        return cls(tools.lm, tools.dig)

    async def measure(self, record: QARecord, answer: Answer, *,
                      trace: Trace) -> dict[str, float]:
        gain = await information_gain(self.lm, record.question, answer_context(answer),
                                      record.answers, self.params, trace=trace)
        return gain or {}


class MeasureRegistry(NamedRegistry[type[Measure]]):
    """Measure classes by name (read-only once built; build a new one to add measures)."""

    kind = "measure"

    def measure(self, name: str) -> type[Measure]:
        """The measure class ``name``; ConfigError listing the known ones when unknown."""
        return self.lookup(name)

    def with_measures(self, *measures: type[Measure]) -> MeasureRegistry:
        """A new registry with ``measures`` added (for plug-ins and tests)."""
        return MeasureRegistry(self.extended(*measures))


MEASURES = MeasureRegistry([ContextRecall, Quality, InformationGain, SynthScore])
JUDGES = tuple(name for name, m in MEASURES.items() if m.needs_judge)
