"""The ``/v1`` wire models: what clients send and get, apart from the internal objects.

An internal :class:`~quaderno.methods.answer.Answer` is mapped to :class:`AskResponse` by
:func:`ask_response`: the answer, the method's typed details, the evidence with its
provenance, the gate's decision and the cost; the trace (prompts included) only when the
request asks for it. Every text field holding document or model text is data: clients must
render it as text, never as HTML.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from quaderno.eval.paired import PairedDifference
from quaderno.gate.decision import GateDecision
from quaderno.llm.trace import Trace
from quaderno.methods.answer import Answer
from quaderno.methods.details import MethodDetails

Mode = Literal["auto", "bm25", "dense", "hybrid"]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AskRequest(_In):
    question: str = Field(..., min_length=1, max_length=8000)
    method: str = Field("pager", description="a registered method (GET /v1/methods)")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="the method's options, checked against its "
                                                "schema (GET /v1/methods/{name})")
    kbs: list[str] | None = Field(None, description="knowledge bases [default: all]")
    k: int | None = Field(None, ge=1, le=100, description="documents per retrieval "
                                                          "[default: the method's]")
    mode: Mode = "auto"
    gate: str | None = Field(None, description="retrieve-or-not gate: always | never | "
                                               "NAME[:GATE] of a gate under $HOME/gates")
    trace: bool = Field(False, description="return the trace: every span, every LLM call "
                                           "with its prompt, and the context the answer "
                                           "was generated from")


class EvidenceOut(BaseModel):
    """A chunk shown to the LLM; ``GET /v1/kbs/{kb}/chunks/{chunk_id}`` reads it whole."""

    n: int = Field(..., description="its number in the answer's sources, from 1")
    chunk_id: str
    kb: str
    title: str
    text: str
    score: float
    query: str


class UsageOut(BaseModel):
    llm_calls: int
    cached_calls: int
    prompt_tokens: int
    completion_tokens: int
    llm_seconds: float
    fallbacks: list[str]


class AskResponse(BaseModel):
    question: str
    answer: str
    explanation: str = ""
    method: str
    details: MethodDetails | None = None
    evidence: list[EvidenceOut] = Field(default_factory=list)
    retrieval_rounds: list[list[str]] = Field(default_factory=list)
    supporting_sections: list[str] = Field(default_factory=list)
    gate: GateDecision | None = None
    usage: UsageOut
    seconds: float
    context: str | None = Field(None, description="what the answer was generated from "
                                                  "(with trace=true)")
    trace: Trace | None = Field(None, description="spans and LLM calls (with trace=true)")


def ask_response(answer: Answer, *, seconds: float, with_trace: bool) -> AskResponse:
    """The wire form of ``answer``; evidence is numbered in the order it was shown, and a
    chunk shown twice keeps its first number."""
    seen: dict[tuple[str, str], int] = {}
    evidence = []
    for e in answer.evidence:
        key = (e.kb, e.chunk_id)
        if key in seen:
            continue
        seen[key] = len(seen) + 1
        evidence.append(EvidenceOut(n=seen[key], chunk_id=e.chunk_id, kb=e.kb, title=e.title,
                                    text=e.text, score=e.score, query=e.query))
    summary = answer.trace.summary()
    return AskResponse(
        question=answer.question, answer=answer.answer, explanation=answer.explanation,
        method=answer.method, details=answer.details, evidence=evidence,
        retrieval_rounds=answer.retrieval_rounds,
        supporting_sections=answer.supporting_sections, gate=answer.gate,
        usage=UsageOut(**{k: summary[k] for k in UsageOut.model_fields}),
        seconds=round(seconds, 4), context=answer.context if with_trace else None,
        trace=answer.trace if with_trace else None)


class SearchRequest(_In):
    query: str = Field(..., min_length=1, max_length=8000)
    kbs: list[str] | None = Field(None, description="knowledge bases [default: all]")
    k: int = Field(5, ge=1, le=100)
    mode: Mode = "auto"
    strategy: Literal["split", "fuse"] = "split"


class SearchHit(BaseModel):
    rank: int
    score: float
    retriever: str
    chunk_id: str
    kb: str
    title: str
    text: str


class ChunkOut(BaseModel):
    id: str
    kb: str
    title: str
    text: str
    source: str
    meta: dict[str, Any] = Field(default_factory=dict)


class MethodInfo(BaseModel):
    name: str
    model: str = Field(..., description="its model name on /v1/chat/completions")
    paper: str
    summary: str
    needs_retrieval: bool
    roles: list[str]
    options: dict[str, Any] = Field(..., description="JSON Schema of the options")


class KBInfo(BaseModel):
    name: str
    kind: str
    chunks: int
    duplicates_dropped: int = 0
    indexes: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    description: str = ""
    created: str = ""


class IndexBuildRequest(_In):
    index: str = Field("default", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    bm25: bool = True
    embedder: str | None = Field(None, max_length=200,
                                 description="none | minilm | hash[:DIM] (DIM ≤ 4096) | "
                                             "a name the server allows (--embedder-allow) "
                                             "[default: none, BM25 only]")


JobState = Literal["queued", "running", "succeeded", "failed"]


class JobProgress(BaseModel):
    stage: str = ""
    done: int = 0
    total: int | None = None


class JobOut(BaseModel):
    """A background job (knowledge-base upload, index build, evaluation run)."""

    id: str
    kind: Literal["kb-add", "index-build", "eval"]
    target: str = Field(..., description="the knowledge base or the run it works on")
    state: JobState
    progress: JobProgress
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = Field(None, description="an ErrorInfo when it failed")
    created: float
    started: float | None = None
    finished: float | None = None


class DatasetInfo(BaseModel):
    name: str
    format: str
    available: bool = Field(..., description="whether its file is in the server's data folder")


class EvalRequest(_In):
    dataset: str = Field(..., description="a named dataset, or a file under the server's "
                                          "data folder (with format)")
    format: str | None = Field(None, description="format of a dataset file")
    method: str = "pager"
    options: dict[str, Any] = Field(default_factory=dict)
    limit: int | None = Field(None, ge=1, le=100000)
    pool: Literal["per-question", "pooled", "kb"] = "per-question"
    kbs: list[str] = Field(default_factory=list)
    retrieval: Mode = "bm25"
    k: int | None = Field(None, ge=1, le=100)
    concurrency: int = Field(2, ge=1, le=64)
    name: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
                             description="run name [default: dataset-method]")


class RunSummary(BaseModel):
    name: str
    dataset: str
    method: str
    n: int
    mean: dict[str, float]
    tokens: dict[str, float] = Field(default_factory=dict)
    latency_s: float = 0.0
    cached_share: float = 0.0
    by_rounds: dict[int, float] = Field(default_factory=dict)
    config: dict[str, Any] = Field(default_factory=dict)


class RecordsPage(BaseModel):
    total: int
    offset: int
    records: list[dict[str, Any]]


class ReportRequest(_In):
    runs: list[str] = Field(..., min_length=1, max_length=50)
    metric: str = Field("cover_em", max_length=100)
    baseline: str | None = Field(None, max_length=100)
    plots: bool = True


class PairedOut(BaseModel):
    """Run ``a`` against run ``b`` on one dataset, matched by question (bootstrap CI)."""

    dataset: str
    difference: PairedDifference


class ReportOut(BaseModel):
    id: str
    metric: str
    methods: list[str]
    datasets: list[str]
    cells: list[list[float | None]] = Field(..., description="methods × datasets means")
    paired: list[PairedOut]
    plots: list[str] = Field(default_factory=list, description="URLs of PNG plots")
    markdown: str


class LLMInfo(BaseModel):
    backend: str
    model_id: str | None = None
    serialized: bool = Field(..., description="true: the embedded model answers one request "
                                              "at a time, the others wait their turn")
    note: str = ""


class LimitsOut(BaseModel):
    max_inflight: int
    max_inflight_per_client: int
    max_request_bytes: int
    max_upload_bytes: int
    in_flight: int


class InfoOut(BaseModel):
    version: str
    llm: LLMInfo
    limits: LimitsOut
    auth: bool = Field(..., description="whether a bearer token is required")
    methods: list[str]
    kbs: list[str]
