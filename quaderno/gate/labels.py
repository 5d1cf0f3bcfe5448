"""Labels for one LLM: does retrieval help this question? (CCSK §4.1, SKR's rule).

Every question is answered twice by the same LLM: closed-book (the ``vanilla-llm`` method,
whose answer a gate reuses when it says "no retrieval") and with retrieval (any registered
method, ``vanilla-rag`` by default). Both answers are scored against the gold answers with a
pluggable metric (SKR: EM) and the question is labelled ``ir_better`` / ``ir_worse`` /
``same`` (L2). The RQM target (ROUGE-1 recall and response–gold cosine, 0 when ROUGE-1 is 0)
is computed in the same pass.

A label file is JSON lines: a header line ``{"kind": "quaderno-gate-labels", ...,
"provenance": {...}}`` naming the LLM, retriever, k and prompts (L4), then one
:class:`LabelRecord` per question, appended and fsynced as each finishes, so labelling
resumes after a crash and a torn last line is cut off. Labels belong to their LLM: a gate
trained on them refuses another LLM unless told otherwise (see :mod:`.wrapper`).

A *precomputed answer file* (``{question, golden_answers, answer_no_retrieval,
answer_retrieval}`` per line, no header) reads through the same :func:`read_labels`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from quaderno.errors import ConfigError, InputFormatError
from quaderno.eval import metrics as M

log = logging.getLogger(__name__)

Judgement = Literal["ir_better", "ir_worse", "same"]
KIND = "quaderno-gate-labels"
FORMAT_VERSION = 1

# L2: the metric a label compares; SKR compares EM
LABEL_METRICS: dict[str, Callable[[str, Sequence[str]], float]] = {
    "em": M.em,
    "cover_em": M.cover_em,
    "acc": M.acc,
    "f1>0.5": lambda prediction, golds: float(M.f1(prediction, golds) > 0.5),
}


def judge(answer_self: str, answer_ir: str, golds: Sequence[str], metric: str = "em") -> Judgement:
    """SKR's rule: ``ir_better`` if the retrieval answer scores higher, ``ir_worse`` if lower,
    else ``same`` (both right or both wrong)."""
    fn = metric_fn(metric)
    s0, s1 = fn(answer_self, golds), fn(answer_ir, golds)
    return "ir_better" if s1 > s0 else "ir_worse" if s1 < s0 else "same"


def metric_fn(metric: str) -> Callable[[str, Sequence[str]], float]:
    try:
        return LABEL_METRICS[metric]
    except KeyError:
        raise ConfigError(f"unknown label metric {metric!r}; choose one of "
                          f"{', '.join(LABEL_METRICS)}") from None


def label_to_y(judgement: str) -> int:
    """L3: y = 1 (retrieval helps) iff ``ir_better``."""
    return int(judgement == "ir_better")


def normalize_question(text: str) -> str:
    """The key questions are deduplicated by (SN6): SQuAD normalisation."""
    return M.normalize_answer(text)


# -- the RQM target (R2) -----------------------------------------------------------------
def rouge1_recall(response: str, gold: str) -> float:
    """ROUGE-1 recall of the gold's tokens in the response (rouge-score, no stemming)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=M._Tokenizer())
    return float(scorer.score(gold, response)["rouge1"].recall)


def rqm_target(response: str, golds: Sequence[str], response_vec: np.ndarray,
               gold_vecs: np.ndarray, weights: Sequence[float] = (0.3, 0.7)) -> float:
    """Y_RQM = W^T [R-1; CS(r, R)], 0 when R-1 = 0, max over golds; CS clipped to [0, 1].
    ``response_vec`` and ``gold_vecs`` are L2-normalised embeddings of the response and golds."""
    if len(weights) != 2 or any(w < 0 for w in weights) or abs(sum(weights) - 1) > 1e-6:
        raise ConfigError(f"RQM weights must be two non-negative numbers summing to 1, "
                          f"got {list(weights)}")
    best = 0.0
    for gold, vec in zip(golds, gold_vecs):
        r1 = rouge1_recall(response, gold)
        if r1 == 0:
            continue
        cs = float(np.clip(np.dot(response_vec, vec), 0.0, 1.0))
        best = max(best, weights[0] * r1 + weights[1] * cs)
    return float(np.clip(best, 0.0, 1.0))


def target_for(response: str, golds: Sequence[str], embedder: Any,
               weights: Sequence[float] = (0.3, 0.7)) -> float:
    """:func:`rqm_target` of a response, embedding it and the golds with ``embedder`` (the
    one function labelling and training use)."""
    vecs = embedder.embed_documents([response, *golds])
    return rqm_target(response, golds, vecs[0], vecs[1:], weights)


# -- records and provenance ---------------------------------------------------------------
class LabelProvenance(BaseModel):
    """What the labels were made with (L4): the same question gets other labels from another
    LLM, retriever, k or prompt."""

    model_config = ConfigDict(extra="forbid")

    llm: str
    retriever: str
    k: int | None = None
    closed_book_method: str = "vanilla-llm"
    retrieval_method: str = "vanilla-rag"
    method_options: dict[str, Any] = Field(default_factory=dict)
    prompt_id: str = ""
    metric: str = "em"
    rqm_embedder: str = ""
    rqm_weights: list[float] = Field(default_factory=lambda: [0.3, 0.7])
    note: str = ""

    def same_labels_as(self, other: LabelProvenance) -> bool:
        return self.model_dump(exclude={"note"}) == other.model_dump(exclude={"note"})


class LabelRecord(BaseModel):
    """One labelled question. The first four fields are a precomputed-answer line; the rest
    is filled by :func:`make_labels` (or missing, e.g. SKR's labels carry no answers)."""

    model_config = ConfigDict(extra="ignore")

    id: str = ""
    question: str
    golden_answers: list[str]
    answer_no_retrieval: str | None = None
    answer_retrieval: str | None = None
    response_no_retrieval: str | None = None  # the raw closed-book reply (RQM reads it)
    response_retrieval: str | None = None
    judgement: Judgement | None = None
    score_no_retrieval: float | None = None
    score_retrieval: float | None = None
    rqm_target: float | None = None
    split: str = ""
    source: str = ""
    llm_calls_no_retrieval: int | None = None
    llm_calls_retrieval: int | None = None
    seconds_no_retrieval: float | None = None
    seconds_retrieval: float | None = None

    @property
    def response(self) -> str:
        """The closed-book response r the gate reads (the raw reply, else the short answer)."""
        return self.response_no_retrieval or self.answer_no_retrieval or ""

    def labelled(self, metric: str = "em") -> Judgement:
        """The stored judgement, else SKR's rule on the two answers."""
        if self.judgement is not None:
            return self.judgement
        if self.answer_no_retrieval is None or self.answer_retrieval is None:
            raise ConfigError(f"question {self.question!r} has neither a judgement nor both "
                              "answers")
        return judge(self.answer_no_retrieval, self.answer_retrieval, self.golden_answers, metric)


class LabelFile(BaseModel):
    provenance: LabelProvenance | None
    records: list[LabelRecord]

    def split(self, *names: str) -> list[LabelRecord]:
        return [r for r in self.records if r.split in names]


def read_labels(path: Path) -> LabelFile:
    """A label file or a precomputed-answer file. A torn last line (a killed writer) is
    ignored; a line that is not a record is an InputFormatError naming the line and field."""
    path = Path(path)
    if not path.is_file():
        raise InputFormatError("label file not found", path=str(path))
    provenance: LabelProvenance | None = None
    records: list[LabelRecord] = []
    lines = path.read_text(encoding="utf-8").split("\n")
    complete = lines[:-1] if lines and lines[-1].strip() else lines
    if len(complete) < len(lines):
        log.warning("%s ends with a partial line; it is ignored", path)
    for n, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFormatError(f"not JSON ({exc.msg})", path=str(path), line=n) from None
        if isinstance(data, dict) and data.get("kind") == KIND:
            if data.get("format_version") != FORMAT_VERSION:
                raise InputFormatError(f"label format version {data.get('format_version')}, "
                                       f"this quaderno reads {FORMAT_VERSION}", path=str(path),
                                       line=n)
            provenance = LabelProvenance.model_validate(data["provenance"])
            continue
        try:
            records.append(LabelRecord.model_validate(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise InputFormatError(f"not a label record ({first['msg']})", path=str(path),
                                   line=n, field=".".join(map(str, first["loc"])) or None) from None
    return LabelFile(provenance=provenance, records=records)


class LabelWriter:
    """Appends records to a label file; on an existing file the provenance must match."""

    def __init__(self, path: Path, provenance: LabelProvenance) -> None:
        self.path = Path(path)
        self.provenance = provenance
        self.done: set[str] = set()
        if self.path.exists() and self.path.stat().st_size:
            existing = read_labels(self.path)
            if existing.provenance is None or not existing.provenance.same_labels_as(provenance):
                raise ConfigError(
                    f"{self.path} holds labels made with {_describe(existing.provenance)}, not "
                    f"{_describe(provenance)}; write to another --out")
            self.done = {r.id for r in existing.records}
            self._truncate_torn_tail()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            header = {"kind": KIND, "format_version": FORMAT_VERSION,
                      "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                      "provenance": provenance.model_dump()}
            self._append(json.dumps(header))

    def _truncate_torn_tail(self) -> None:
        raw = self.path.read_bytes()
        end = raw.rfind(b"\n") + 1
        if end < len(raw):
            with open(self.path, "r+b") as fh:
                fh.truncate(end)

    def _append(self, line: str) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def write(self, record: LabelRecord) -> None:
        self._append(record.model_dump_json(exclude_none=True))
        self.done.add(record.id)


def _describe(p: LabelProvenance | None) -> str:
    if p is None:
        return "no provenance"
    return (f"LLM {p.llm}, retriever {p.retriever}, k {p.k}, {p.retrieval_method}, prompt "
            f"{p.prompt_id}, metric {p.metric}")


def prompt_id(*texts: str) -> str:
    """A short hash of the prompts the answers were made with."""
    return hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()[:12]


def read_skr(path: Path) -> list[LabelRecord]:
    """SKR's published labels (THUNLP-MT/SKR ``skr_training.json``: ``{question, judgement,
    golden_answers}``), made with InstructGPT: usable as SN memory, recorded as such."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputFormatError(f"cannot read SKR labels ({exc})", path=str(path)) from None
    out = []
    for n, item in enumerate(data, start=1):
        try:
            out.append(LabelRecord(id=f"skr:{n}", question=item["question"],
                                   golden_answers=list(item["golden_answers"]),
                                   judgement=item["judgement"], split="memory",
                                   source="skr-instructgpt"))
        except (KeyError, TypeError, ValidationError) as exc:
            raise InputFormatError(f"not an SKR label ({exc})", path=str(path), line=n) from None
    return out


SKR_LLM = "instructgpt (THUNLP-MT/SKR labels)"


def relabel(labels: LabelFile, metric: str) -> LabelFile:
    """The same answers judged with another metric (no LLM needed: both answers are stored);
    the provenance records the new metric. Records without both answers keep their label."""
    metric_fn(metric)
    records = [r.model_copy(update={"judgement": judge(r.answer_no_retrieval,
                                                       r.answer_retrieval, r.golden_answers,
                                                       metric)})
               if r.answer_no_retrieval is not None and r.answer_retrieval is not None else r
               for r in labels.records]
    prov = (labels.provenance.model_copy(update={"metric": metric})
            if labels.provenance is not None else None)
    return LabelFile(provenance=prov, records=records)
