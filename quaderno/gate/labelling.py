"""Making labels with an LLM: answer each question closed-book and with retrieval, score
both, label, and append to the label file as each question finishes (resumable)."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from quaderno.errors import ConfigError, LLMError
from quaderno.eval.datasets import QARecord
from quaderno.gate.labels import (LabelProvenance, LabelRecord, LabelWriter, judge, metric_fn,
                                  normalize_question, prompt_id, target_for)
from quaderno.gate.protocol import CLOSED_BOOK
from quaderno.index.embedders import Embedder
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.baselines import LLM_ANSWER
from quaderno.methods.registry import get_spec, make_method

log = logging.getLogger(__name__)


def provenance_for(lm: LM, retriever: Retriever | None, *, method: str = "vanilla-rag",
                   options: Mapping[str, Any] | None = None, metric: str = "em",
                   embedder: Embedder | None = None, weights: Sequence[float] = (0.3, 0.7),
                   note: str = "") -> LabelProvenance:
    """The provenance of labels made with these parts (L4)."""
    metric_fn(metric)
    spec = get_spec(method)
    if not spec.needs_retrieval:
        raise ConfigError(f"the retrieval side of the labels must retrieve; method {method!r} "
                          "does not (try vanilla-rag)")
    opts = spec.validate(dict(options or {})).model_dump()
    return LabelProvenance(
        llm=lm.model_id, retriever=retriever.fingerprint if retriever is not None else "none",
        k=opts.get("k"), retrieval_method=method, method_options=opts,
        prompt_id=prompt_id(LLM_ANSWER.instruction, method, repr(sorted(opts.items()))),
        metric=metric, rqm_embedder=embedder.spec if embedder is not None else "",
        rqm_weights=list(weights), note=note)


def select(records: Sequence[QARecord], *, n: int | None, seed: int = 0,
           exclude: Iterable[str] = (), drop_url_answers: bool = True) -> list[QARecord]:
    """Up to ``n`` records in a seeded random order, none whose normalised question is in
    ``exclude`` (SN6), none twice, and (by default) none whose every gold answer is a URL
    (WebQuestions has some: no short answer can match them)."""
    banned = {normalize_question(q) for q in exclude}
    seen: set[str] = set()
    kept = []
    for r in records:
        key = normalize_question(r.question)
        if key in banned or key in seen:
            continue
        if drop_url_answers and all(a.strip().startswith(("http://", "https://"))
                                    for a in r.answers):
            continue
        seen.add(key)
        kept.append(r)
    random.Random(seed).shuffle(kept)
    return kept if n is None else kept[:n]


async def make_labels(records: Sequence[QARecord], writer: LabelWriter, lm: LM,
                      retriever: Retriever | None, *, split: str, source: str,
                      embedder: Embedder, progress: Callable[[int, int], None] | None = None
                      ) -> list[LabelRecord]:
    """Label ``records`` one at a time into ``writer`` (those already there are skipped).
    A question whose LLM calls fail is logged and left out, so the next run retries it."""
    prov = writer.provenance
    closed = make_method(CLOSED_BOOK, lm, None)
    rag = make_method(prov.retrieval_method, lm, retriever, prov.method_options)
    todo = [r for r in records if r.id not in writer.done]
    log.info("%d questions, %d already labelled, %d to label", len(records),
             len(records) - len(todo), len(todo))
    out: list[LabelRecord] = []
    for i, record in enumerate(todo, start=1):
        try:
            t0 = time.perf_counter()
            a0 = await closed.answer(record.question, trace=Trace(label=record.id))
            t1 = time.perf_counter()
            a1 = await rag.answer(record.question, trace=Trace(label=record.id))
            t2 = time.perf_counter()
        except LLMError as exc:
            log.warning("question %s failed (%s); left out, run again to retry", record.id, exc)
            continue
        fn = metric_fn(prov.metric)
        label = LabelRecord(
            id=record.id, question=record.question, golden_answers=record.answers,
            answer_no_retrieval=a0.answer, answer_retrieval=a1.answer,
            response_no_retrieval=a0.explanation or a0.answer,
            response_retrieval=a1.explanation or a1.answer,
            judgement=judge(a0.answer, a1.answer, record.answers, prov.metric),
            score_no_retrieval=fn(a0.answer, record.answers),
            score_retrieval=fn(a1.answer, record.answers),
            rqm_target=target_for(a0.explanation or a0.answer, record.answers, embedder,
                                  prov.rqm_weights),
            split=split, source=source,
            llm_calls_no_retrieval=len(a0.trace.calls), llm_calls_retrieval=len(a1.trace.calls),
            seconds_no_retrieval=round(t1 - t0, 3), seconds_retrieval=round(t2 - t1, 3))
        writer.write(label)
        out.append(label)
        log.info("%s %s: %s (%.1fs + %.1fs)", split, record.id, label.judgement, t1 - t0, t2 - t1)
        if progress is not None:
            progress(i, len(todo))
    return out
