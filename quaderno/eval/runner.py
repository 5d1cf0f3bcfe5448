"""Run a method over a dataset: concurrent, resumable, one JSONL record per question.

A run directory holds ``config.json`` (method, model, retriever, k, dataset, code version)
and ``results.jsonl``, appended (flushed and fsynced) as each question finishes. Running
again into the same directory skips the questions already recorded, so a run interrupted
even by ``kill -9`` resumes without redoing or duplicating items; a half-written last line
is cut off first. A question whose LLM calls still fail after the backend's retries is
reported and left out, so the next resume retries it.

Each line is a :class:`~quaderno.eval.records.ResultRecord`. Its metrics are the answer
metrics of :func:`score` and those of the run's measures (:mod:`quaderno.eval.measures`):
the judges and DIG the configuration names, its extra ``measures`` (where a dataset's own
measures go) and the ones the method's spec adds. Measuring costs are recorded apart from
the method's (``eval_calls``). Measures share the run directory's parent folder (the
``--out`` folder): context recall keeps its ground-truth statements there
(``ground_truth.sqlite``), so every run in that folder is judged against the same ones.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from quaderno import __version__
from quaderno.corpus.chunk import Chunk
from quaderno.errors import ConfigError, LLMError
from quaderno.eval import metrics as M
from quaderno.eval.datasets import QARecord
from quaderno.eval.dig import DIGParams
from quaderno.eval.measures import JUDGES, MEASURES, Measure, MeasureRegistry, MeasureTools
from quaderno.eval.records import EvalCost, ResultRecord, read_results
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.answer import Answer
from quaderno.methods.registry import METHODS
from quaderno.methods.spec import MethodRegistry
from quaderno.storage import write_json_atomic
from quaderno.workspace import Workspace

log = logging.getLogger(__name__)

POOLS = ("per-question", "pooled", "kb")
RECALL_KS = (2, 5, 10)

__all__ = ["JUDGES", "EvalRunner", "ResultRecord", "RunConfig", "read_results", "score"]


class RunConfig(BaseModel):
    """Everything that determines a run's results (compared on resume)."""

    dataset: str
    limit: int | None = None
    method: str
    method_options: dict[str, Any] = Field(default_factory=dict)
    k: int = 5
    pool: str = "per-question"
    kbs: list[str] = Field(default_factory=list)
    retrieval: str = "bm25"
    embedder: str | None = None
    model: str
    generation: dict[str, Any] = Field(default_factory=dict)
    judge_model: str | None = None
    judges: list[str] = Field(default_factory=list)
    dig: DIGParams | None = None  # document information gain, scored by the answering LLM
    # further measures by name (quaderno.eval.measures), e.g. those a dataset calls for;
    # a config.json written before this existed reads as []
    measures: list[str] = Field(default_factory=list)
    # model ids of the method's other LLM roles (e.g. {"reasoner": "openai:deepseek-r1"});
    # a role not named uses the answering LLM
    roles: dict[str, str] = Field(default_factory=dict)
    # a retrieve-or-not gate in front of the method (CCSK): always | never | DIR | DIR:GATE
    gate: str | None = None
    gate_allow_other_llm: bool = False

    @classmethod
    def from_saved(cls, saved: dict[str, Any]) -> RunConfig:
        """The configuration in a run's config.json (which also holds code version and start
        time); options added since the run started read as their defaults."""
        known = {k: v for k, v in saved.items() if k in cls.model_fields}
        if isinstance(known.get("dig"), dict) and "alias" not in known["dig"]:
            known["dig"] = {**known["dig"], "alias": "max_gain"}  # what DIG did before
        return cls(**known)

    def check(self) -> None:
        if self.pool not in POOLS:
            raise ConfigError(f"pool must be one of {', '.join(POOLS)}, got {self.pool!r}")
        if self.pool == "kb" and not self.kbs:
            raise ConfigError("pool 'kb' needs knowledge bases (--kb)")
        unknown = set(self.judges) - set(JUDGES)
        if unknown:
            raise ConfigError(f"unknown judges {sorted(unknown)}; choose from {', '.join(JUDGES)}")
        if self.judges and self.judge_model is None:
            raise ConfigError("judges need a judge LLM")

    @property
    def self_judged(self) -> bool:
        """Whether the answering model judges its own pages (the paper's quality judge is
        another model, GLM): its scores then lean towards its own writing."""
        return "quality" in self.judges and self.judge_model == self.model


def _grows(before: int | None, after: int | None) -> bool:
    """Whether a run limited to ``before`` questions may go on to ``after`` (None: all)."""
    return before is not None and (after is None or after > before)


def code_version() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=Path(__file__).parent, timeout=5, check=False)
        commit = out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{__version__}+{commit}" if commit else __version__


def score(record: QARecord, answer: Answer) -> dict[str, Any]:
    """Answer metrics, retrieval recall/precision of supporting contexts, overlap."""
    out: dict[str, Any] = {name: fn(answer.answer, record.answers)
                           for name, fn in M.SPAN_METRICS.items()}
    if record.long_form:
        text = answer.answer if len(answer.answer) > len(answer.explanation) else answer.explanation
        out |= M.rouge(text, record.answers) | M.bleu(text, record.answers)
    retrieved = list(dict.fromkeys(e.chunk_id for e in answer.evidence))
    relevant = record.supporting_ids if answer.retrieval_rounds else set()  # no retrieval: n/a
    for k in RECALL_KS:
        r = M.recall_at_k(retrieved, relevant, k)
        if r is not None:
            out[f"recall@{k}"] = r
            out[f"precision@{k}"] = M.precision_at_k(retrieved, relevant, k)
    overlap = M.jaccard_overlap(answer.retrieval_rounds)
    if overlap:
        out["overlap"] = sum(overlap) / len(overlap)
    return out


class EvalRunner:
    """Runs one method over records into ``run_dir``. ``methods`` and ``measures`` are the
    registries the run's method and measures are looked up in (default: quaderno's own; pass
    ``METHODS.with_specs(...)`` or ``MEASURES.with_measures(...)`` to add plug-ins)."""

    def __init__(self, config: RunConfig, run_dir: Path, *, lm: LM, judge: LM | None = None,
                 workspace: Workspace | None = None, concurrency: int = 4,
                 methods: MethodRegistry | None = None,
                 measures: MeasureRegistry | None = None,
                 roles: Mapping[str, LM] | None = None) -> None:
        config.check()
        self.roles = dict(roles or {})
        if {r: lm.model_id for r, lm in self.roles.items()} != config.roles:
            raise ConfigError(f"the run's config names roles {config.roles} but the runner was "
                              f"given {sorted(self.roles)}: pass the same LLMs")
        if concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
        self.config, self.run_dir, self.lm, self.judge = config, Path(run_dir), lm, judge
        if config.self_judged:
            log.warning("the quality judge is the answering model (%s): it judges its own "
                        "pages; pass --judge-model (and --judge-base-url) for another model, "
                        "as the paper's GLM judge is", config.model)
        self.methods = methods if methods is not None else METHODS
        self.spec = self.methods.spec(config.method)
        self.measures = self._measures(measures if measures is not None else MEASURES)
        self.concurrency = concurrency
        self.workspace = workspace or Workspace(self.run_dir / "workspace")
        self.results_path = self.run_dir / "results.jsonl"
        self.gate = None
        if config.gate is not None:
            from quaderno.gate.store import load_gate
            from quaderno.gate.wrapper import check_llm

            self.gate = load_gate(config.gate)
            check_llm(self.gate, lm, allow_other_llm=config.gate_allow_other_llm)
        self.failures: list[tuple[str, str]] = []

    def _measures(self, registry: MeasureRegistry) -> list[Measure]:
        """The run's measures, built: the configuration's judges, DIG and extra measures,
        then the method's; a measure the run's LLMs cannot serve is refused here."""
        cfg = self.config
        why: dict[str, str] = {}  # name → how to leave it out
        for name in cfg.judges:
            why.setdefault(name, "or leave it out of --judges")
        if cfg.dig is not None:
            why.setdefault("dig", "or leave out --dig")
        for name in cfg.measures:
            why.setdefault(name, "or leave it out of the run's measures")
        for name in self.spec.measures:
            why.setdefault(name, f"or another method (method {cfg.method!r} always "
                                f"measures {name})")
        # the folder of the run directories: what a measure keeps there (context recall's
        # ground truth) every run beside this one reuses
        tools = MeasureTools(self.lm, self.judge, cfg.dig or DIGParams(),
                             shared_dir=self.run_dir.parent)
        built = []
        for name, remedy in why.items():
            kind = registry.measure(name)
            if kind.needs_judge and self.judge is None:
                raise ConfigError(f"{kind.title} needs a judge LLM and the run has none: give "
                                  f"one (eval --judge-model), {remedy}")
            if kind.needs_scoring and not self.lm.supports_scoring:
                raise ConfigError(f"{kind.title} needs the answering LLM to score the gold "
                                  f"answer, and {self.lm.model_id} cannot: use --llm "
                                  f"llama-cpp (any GGUF model) or a vLLM server, {remedy}")
            built.append(kind.build(tools))
        return built

    # -- configuration ------------------------------------------------------------------
    def _prepare_dir(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        path = self.run_dir / "config.json"
        current = self.config.model_dump()
        if path.exists():
            saved = json.loads(path.read_text(encoding="utf-8"))
            try:
                previous = RunConfig.from_saved(saved).model_dump()
            except ValueError as exc:
                raise ConfigError(f"{path} is not a run configuration: {exc}") from exc
            diff = sorted(k for k in current if previous.get(k) != current[k])
            grows = diff == ["limit"] and _grows(previous["limit"], current["limit"])
            if diff and not grows:
                hint = (" (a run's --limit may grow, never shrink)" if diff == ["limit"] else "")
                raise ConfigError(f"{self.run_dir} holds a run with another configuration "
                                  f"(differs in {', '.join(diff)}){hint}; use a new --out")
            if grows:  # the same run over more questions: the answered ones are kept
                saved["limit"] = current["limit"]
                saved.setdefault("limits", [previous["limit"]]).append(current["limit"])
                write_json_atomic(path, saved)
            return
        data = {**current, "code_version": code_version(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, path)

    def _note_code_version(self) -> None:
        """A resumed run about to answer questions records the code it answers them with
        when it differs from the last recorded (``code_versions``): its first questions may
        have run older code."""
        path = self.run_dir / "config.json"
        saved = json.loads(path.read_text(encoding="utf-8"))
        versions = saved.get("code_versions") or [saved.get("code_version")]
        if code_version() != versions[-1]:
            saved["code_versions"] = [*versions, code_version()]
            write_json_atomic(path, saved)

    # -- retrieval pools ----------------------------------------------------------------
    def _build_pool(self, name: str, contexts: Sequence[Any]) -> None:
        if self.workspace.has_kb(name) and self.workspace.index_names(name):
            return
        chunks = {c.id: Chunk(id=c.id, title=c.title, text=c.text) for c in contexts}
        self.workspace.add_kb(name, chunks.values(), replace=True, max_words=None, dedup=False)
        self.workspace.build_index(name, bm25=True, embedder=self.config.embedder)

    def _retriever_factory(self, records: Sequence[QARecord]) -> Callable[[QARecord],
                                                                           Retriever | None]:
        cfg = self.config
        if not self.spec.needs_retrieval:
            return lambda record: None
        if cfg.pool == "kb":
            shared = self.workspace.retriever(cfg.kbs, mode=cfg.retrieval)
            return lambda record: shared
        if not any(r.contexts for r in records):
            raise ConfigError(f"dataset {cfg.dataset!r} has no paragraphs of its own; evaluate "
                              "it over knowledge bases with --kb")
        if cfg.pool == "pooled":
            self._build_pool("pool", [c for r in records for c in r.contexts])
            shared = self.workspace.retriever("pool", mode=cfg.retrieval)
            return lambda record: shared

        def per_question(record: QARecord) -> Retriever:
            name = "q-" + "".join(ch if ch.isalnum() else "_" for ch in record.id)[:60]
            self._build_pool(name, record.contexts)
            return self.workspace.retriever(name, mode=cfg.retrieval, cache=False)

        return per_question

    # -- running ------------------------------------------------------------------------
    async def run(self, records: Sequence[QARecord],
                  progress: Callable[[int, int], None] | None = None) -> list[ResultRecord]:
        self._prepare_dir()
        done = {r.id for r in read_results(self.results_path)}
        todo = [r for r in records if r.id not in done]
        log.info("%d questions, %d already done, %d to run", len(records), len(done), len(todo))
        if not todo:  # a finished run needs no retrieval pool (nor its knowledge bases)
            return read_results(self.results_path)
        self._note_code_version()
        retriever_for = self._retriever_factory(records)  # the pool spans every record
        sem = asyncio.Semaphore(self.concurrency)
        lock = asyncio.Lock()
        finished = len(done)
        with open(self.results_path, "a", encoding="utf-8") as out:

            async def one(record: QARecord) -> None:
                nonlocal finished
                async with sem:
                    try:
                        result = await self._evaluate(record, retriever_for)
                    except LLMError as exc:
                        self.failures.append((record.id, str(exc)))
                        log.warning("question %s failed: %s", record.id, exc)
                        return
                async with lock:
                    out.write(result.model_dump_json() + "\n")
                    out.flush()
                    os.fsync(out.fileno())
                    finished += 1
                    if progress is not None:
                        progress(finished, len(records))

            await asyncio.gather(*[one(r) for r in todo])
        return read_results(self.results_path)

    async def _evaluate(self, record: QARecord,
                        retriever_for: Callable[[QARecord], Retriever | None]) -> ResultRecord:
        cfg = self.config
        retriever = await asyncio.to_thread(retriever_for, record)
        options = dict(cfg.method_options)
        if self.spec.needs_retrieval:
            options.setdefault("k", cfg.k)
        if "store_dir" in self.spec.options.model_fields:
            # DocSage's tuple store: one per pool of knowledge, in the workspace, so every
            # question (and every ablation run over the same workspace) re-uses extractions
            pool = "+".join(sorted(cfg.kbs)) if cfg.pool == "kb" else cfg.pool
            options.setdefault("store_dir", str(self.workspace.root / "docsage" / pool))
        method = self.methods.make(cfg.method, self.lm, retriever, options, roles=self.roles)
        if self.gate is not None:
            from quaderno.gate.wrapper import GatedMethod

            method = GatedMethod(self.gate, method, self.lm,
                                 allow_other_llm=cfg.gate_allow_other_llm)
        trace = Trace(label=record.id)
        t0 = time.perf_counter()
        answer = await method.answer(record.question, trace=trace)
        latency = time.perf_counter() - t0
        scores = score(record, answer)
        judged = Trace(label=f"{record.id}:evaluation")  # measuring is not the method's cost
        for measure in self.measures:
            scores |= await measure.measure(record, answer, trace=judged)
        summary = answer.trace.summary()
        cost = judged.summary()
        return ResultRecord(
            id=record.id, question=record.question, answers=record.answers,
            prediction=answer.answer, method=answer.method, metrics=scores,
            retrieval_rounds=answer.retrieval_rounds,
            page=answer.page.render() if answer.page else None, context=answer.context,
            llm_calls=summary["llm_calls"], cached_calls=summary["cached_calls"],
            prompt_tokens=summary["prompt_tokens"],
            completion_tokens=summary["completion_tokens"], fallbacks=summary["fallbacks"],
            latency_s=round(latency, 3),
            eval_calls=EvalCost.model_validate(cost) if judged.calls else None,
            details=answer.details, gate=answer.gate)
