"""LLM judges as typed steps; the judge LLM is configured apart from the answering LLM.

- :func:`context_recalls` / :func:`context_recall` — the missing-knowledge paper's Eq. 4 with
  its two prompts (Appendix C, Fig. 6), in the RAGAS ContextRecall form (checklist A19): the
  judge writes ground-truth statements GT_C from (question, gold answers), then labels each
  as attributed (1) or not (0) to the retrieved contexts; recall = attributed / |GT_C|, in
  [0, 1]. GT_C is written once per question and judge model and kept in a
  :class:`GroundTruthStore`, so every method and every run that uses the store is judged
  against the same statements (the LLM cache would not do: ``--no-cache`` turns it off).
  Empty contexts score 0 without a call. A reply that is still not the JSON asked for after
  the step's one repair re-ask gives ``None`` (NaN): not a score, and not a 0.
- :func:`representation_quality` — PAGER's Fig. 13: four dimensions scored 0–5 (knowledge
  structuring, document refinement, coherence & logical flow, correctness & argumentation).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from quaderno.errors import InputFormatError, ParseError, StepError
from quaderno.llm.lm import LM
from quaderno.llm.parsing import strip_thinking
from quaderno.eval.judge_prompts import QUALITY_INSTRUCTION
from quaderno.llm.steps import Step
from quaderno.llm.trace import Trace


def _clip(limit: int) -> Any:
    """A before-validator cutting text to ``limit`` characters: a judge's long reason or
    statement is not a reason to lose its judgment."""
    def clip(value: Any) -> Any:
        return value[:limit] if isinstance(value, str) else value
    return clip


class GroundTruthContext(BaseModel):
    context: str = Field(min_length=1, max_length=400)

    @model_validator(mode="before")
    @classmethod
    def _either_key(cls, data: Any) -> Any:
        if isinstance(data, str):  # a list of bare strings
            return {"context": data}
        if isinstance(data, dict) and "context" not in data and "statement" in data:
            return {**data, "context": data["statement"]}
        return data

    _clip_context = field_validator("context", mode="before")(_clip(400))


class GroundTruthContexts(BaseModel):
    contexts: list[GroundTruthContext] = Field(min_length=1, max_length=8,
                                               description="statements needed to answer")


class Attribution(BaseModel):
    statement: str = Field(default="", max_length=400)
    attributed: int = Field(ge=0, le=1, description="1 if the retrieved contexts support it")
    reason: str = Field(default="", max_length=300)

    @model_validator(mode="before")
    @classmethod
    def _either_key(cls, data: Any) -> Any:
        """Figs. 6–7 write ``statement``; the paper's §3.1 prose writes ``context``."""
        if isinstance(data, dict) and "statement" not in data and "context" in data:
            return {**data, "statement": data["context"]}
        return data

    @field_validator("attributed", mode="before")
    @classmethod
    def _yes_no(cls, value: Any) -> Any:
        """The prompt asks for "Yes" (1) or "No" (0); §3.1 calls it a boolean."""
        if isinstance(value, str):
            word = value.strip().strip(".").lower()
            return {"yes": 1, "no": 0, "true": 1, "false": 0, "1": 1, "0": 0}.get(word, value)
        return value

    _clip_statement = field_validator("statement", mode="before")(_clip(400))
    _clip_reason = field_validator("reason", mode="before")(_clip(300))


class Attributions(BaseModel):
    classification: list[Attribution] = Field(min_length=1, max_length=8)


def json_objects(text: str) -> list[dict[str, Any]]:
    """The top-level JSON objects of a reply, in order: the items of a bare JSON list, or
    objects written one after another as Fig. 7 prints them."""
    text = strip_thinking(text)
    decoder = json.JSONDecoder()
    found, i = [], 0
    while (i := text.find("{", i)) != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        if isinstance(value, dict):
            found.append(value)
        i = end
    return found


@dataclass(frozen=True)
class ItemsStep(Step):
    """A step whose output model is one list (field ``items``); a reply that gives the list's
    items without the wrapping object is read as that list."""

    items: str = ""

    def _parse(self, text: str) -> Any:
        try:
            return super()._parse(text)
        except ParseError as first:
            objects = json_objects(text)
            if not objects or self.output is None:
                raise
            try:
                return self.output.model_validate({self.items: objects})
            except ValidationError:
                raise first from None


GT_CONTEXTS = ItemsStep(
    name="judge.gt_contexts", inputs=("question", "answer"), output=GroundTruthContexts,
    max_tokens=768, items="contexts",
    instruction="You are a professional knowledge assistant. Given a question and an answer, "
                "analyze the context or evidence knowledge needed to answer the question. "
                "Output json with context. Use the same language as the actual task.\n\n"
                "Question:\n```\n{question}\n```\n\nAnswer:\n```\n{answer}\n```")
ATTRIBUTE = ItemsStep(
    name="judge.attribution", inputs=("question", "contexts", "ground_truth"),
    output=Attributions, max_tokens=1024, items="classification",
    instruction="You are a professional knowledge assistant. Given a question, retrieved "
                "contexts and ground truth statements, analyze each sentence in the statements "
                "can be attributed to a given context or not. Use only \"Yes\" (1) or \"No\" (0) "
                "as a binary classification. Output json with reason. Use the same language as "
                "the actual task.\n\nQuestion:\n```\n{question}\n```\n\nContexts:\n```\n"
                "{contexts}\n```\n\nGround Truth:\n```\n{ground_truth}\n```")
# statements written with another prompt or schema are not reused
GT_PROMPT_VERSION = hashlib.md5((GT_CONTEXTS.instruction + json.dumps(
    GT_CONTEXTS.json_schema(), sort_keys=True)).encode()).hexdigest()[:12]

_STORE_SCHEMA = """
CREATE TABLE IF NOT EXISTS ground_truth (
    judge_model TEXT NOT NULL,
    item TEXT NOT NULL,
    prompt TEXT NOT NULL,
    question TEXT NOT NULL,
    answers TEXT NOT NULL,
    statements TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (judge_model, item, prompt)
);
"""


class GroundTruthStore:
    """GT_C per (judge model, MD5 of the question and its gold answers), in SQLite: the first
    statements written for a key are the ones every later reader gets, across runs,
    methods and processes. The runner keeps it beside the run directories
    (``<--out>/ground_truth.sqlite``); the file is made on the first write."""

    FILENAME = "ground_truth.sqlite"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @staticmethod
    def item_key(question: str, answers: Sequence[str]) -> str:
        return hashlib.md5(json.dumps([question, list(answers)], ensure_ascii=False)
                           .encode()).hexdigest()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        conn.executescript(_STORE_SCHEMA)
        return conn

    def _read(self, conn: sqlite3.Connection, key: tuple[str, str, str]) -> list[str] | None:
        row = conn.execute("SELECT statements FROM ground_truth WHERE judge_model = ? AND "
                           "item = ? AND prompt = ?", key).fetchone()
        return json.loads(row[0]) if row else None

    def _failed(self, exc: sqlite3.Error) -> InputFormatError:
        return InputFormatError(f"cannot use it as the ground-truth store of context recall "
                                f"({exc}); move the file away and the next run starts a new "
                                "one", path=str(self.path))

    def get(self, judge_model: str, question: str, answers: Sequence[str]) -> list[str] | None:
        """The stored statements, or None when there are none yet."""
        if not self.path.exists():
            return None
        key = (judge_model, self.item_key(question, answers), GT_PROMPT_VERSION)
        try:
            with closing(self._connect()) as conn:
                return self._read(conn, key)
        except sqlite3.Error as exc:
            raise self._failed(exc) from exc

    def put(self, judge_model: str, question: str, answers: Sequence[str],
            statements: Sequence[str]) -> list[str]:
        """Store ``statements`` unless the key has some already; returns the stored ones."""
        key = (judge_model, self.item_key(question, answers), GT_PROMPT_VERSION)
        try:
            with closing(self._connect()) as conn:
                conn.execute("INSERT OR IGNORE INTO ground_truth VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (*key, question, json.dumps(list(answers), ensure_ascii=False),
                              json.dumps(list(statements), ensure_ascii=False), time.time()))
                stored = self._read(conn, key)
        except sqlite3.Error as exc:
            raise self._failed(exc) from exc
        return stored if stored is not None else list(statements)

    def __len__(self) -> int:
        if not self.path.exists():
            return 0
        try:
            with closing(self._connect()) as conn:
                return int(conn.execute("SELECT COUNT(*) FROM ground_truth").fetchone()[0])
        except sqlite3.Error as exc:
            raise self._failed(exc) from exc


async def ground_truth(judge: LM, question: str, answers: Sequence[str], *,
                       store: GroundTruthStore | None = None,
                       trace: Trace | None = None) -> tuple[list[str], bool]:
    """GT_C for a question: ``(statements, True)`` from the store when it has them, else
    written by the judge (and stored). StepError when the judge's JSON fails twice."""
    if store is not None:
        stored = await asyncio.to_thread(store.get, judge.model_id, question, answers)
        if stored is not None:
            return stored, True
    gt = (await GT_CONTEXTS.run(judge, question=question, answer=" / ".join(answers),
                                trace=trace)).value
    statements = [c.context for c in gt.contexts]
    if store is not None:
        statements = await asyncio.to_thread(store.put, judge.model_id, question, answers,
                                             statements)
    return statements, False


async def attributed(judge: LM, question: str, statements: Sequence[str],
                     contexts: Sequence[str], *, trace: Trace | None = None) -> int:
    """How many of ``statements`` the judge attributes to ``contexts`` (labels in order; a
    statement the reply leaves unlabelled counts as not attributed, noted in the trace).
    StepError when the judge's JSON fails twice."""
    labels = (await ATTRIBUTE.run(
        judge, question=question, contexts="\n".join(f"\"{c}\"," for c in contexts),
        ground_truth="\n".join(json.dumps({"context": s}, ensure_ascii=False)
                               for s in statements),
        trace=trace)).value.classification
    if len(labels) < len(statements) and trace is not None:
        trace.fallback(f"context recall: {len(labels)} labels for {len(statements)} "
                       "statements; the unlabelled ones count as not attributed")
    return sum(a.attributed for a in labels[:len(statements)])


async def context_recalls(judge: LM, question: str, answers: Sequence[str],
                          context_sets: Mapping[str, Sequence[str]], *,
                          store: GroundTruthStore | None = None,
                          trace: Trace | None = None) -> dict[str, float | None]:
    """Eq. 4 for each named set of retrieved contexts, against one GT_C (Table 3 scores
    each source's chunks so). An empty set scores 0 without a call; ``None`` (NaN) where
    the judge's JSON failed after its re-ask, recorded in the trace."""
    trace = trace or Trace()
    scores: dict[str, float | None] = {name: 0.0 for name, ctx in context_sets.items()
                                       if not ctx}
    todo = {name: ctx for name, ctx in context_sets.items() if ctx}
    if not todo:
        return scores
    with trace.span("judge.context_recall", sets=list(context_sets)) as span:
        try:
            statements, reused = await ground_truth(judge, question, answers, store=store,
                                                    trace=trace)
        except StepError as exc:
            trace.fallback(f"context recall not judged (NaN): no ground truth: {exc}", span)
            return scores | {name: None for name in todo}
        span.outputs = {"ground_truth": statements, "ground_truth_stored": reused}
        for name, contexts in todo.items():
            try:
                hits = await attributed(judge, question, statements, contexts, trace=trace)
            except StepError as exc:
                trace.fallback(f"{name} not judged (NaN): {exc}", span)
                scores[name] = None
                continue
            scores[name] = hits / len(statements)
            span.outputs[name] = {"attributed": hits, "recall": scores[name]}
    return scores


async def context_recall(judge: LM, question: str, answers: Sequence[str],
                         contexts: Sequence[str], *, store: GroundTruthStore | None = None,
                         trace: Trace | None = None) -> float | None:
    """Eq. 4 over ``contexts``; ``None`` (NaN) when the judge's JSON failed after a re-ask."""
    return (await context_recalls(judge, question, answers, {"recall": contexts},
                                  store=store, trace=trace))["recall"]


class QualityScores(BaseModel):
    knowledge_structuring: int = Field(ge=0, le=5)
    document_refinement: int = Field(ge=0, le=5)
    coherence_logical_flow: int = Field(ge=0, le=5)
    correctness_argumentation: int = Field(ge=0, le=5)
    conclusion: str = Field(default="", max_length=300)

    @property
    def average(self) -> float:
        return (self.knowledge_structuring + self.document_refinement
                + self.coherence_logical_flow + self.correctness_argumentation) / 4


QUALITY = Step(
    name="judge.representation_quality", max_tokens=512,
    inputs=("question", "ground_truth", "retrieved_docs", "generated_context"),
    output=QualityScores, instruction=QUALITY_INSTRUCTION)


async def representation_quality(judge: LM, question: str, answers: Sequence[str],
                                 retrieved: Sequence[str], context: str, *,
                                 trace: Trace | None = None) -> QualityScores | None:
    trace = trace or Trace()
    with trace.span("judge.representation_quality") as span:
        try:
            scores = (await QUALITY.run(judge, question=question, ground_truth=" / ".join(answers),
                                        retrieved_docs="\n".join(retrieved) or "(none)",
                                        generated_context=context, trace=trace)).value
        except StepError as exc:
            trace.fallback(f"representation quality not judged: {exc}", span)
            return None
        span.outputs = scores.model_dump()
    return scores
