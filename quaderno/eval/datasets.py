"""Benchmark datasets → one question record.

Every loader yields :class:`QARecord` (id, question, golden answers, optional supporting
contexts, optional per-question retrieval pool). Formats are read as their sources wrote
them (see ``shared/data/MANIFEST.md``); named datasets resolve to files under the data
folder (``--data-dir``, ``QUADERNO_DATA``, or ``../shared/data`` next to the checkout).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from quaderno.errors import ConfigError, InputFormatError, NotFoundError


class Context(BaseModel):
    """A paragraph that comes with a question: gold support, or a retrieval-pool member."""

    id: str
    title: str = ""
    text: str
    supporting: bool = False


class QARecord(BaseModel):
    id: str
    question: str
    answers: list[str]
    contexts: list[Context] = Field(default_factory=list)  # the per-question pool, if any
    long_form: bool = False  # answers are passages (ROUGE/BLEU), not spans
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def supporting_ids(self) -> set[str]:
        return {c.id for c in self.contexts if c.supporting}


def _cid(title: str, text: str) -> str:
    return hashlib.md5(f"{title}\n{text}".encode()).hexdigest()[:16]


def _ctx(title: str, text: str, supporting: bool = False) -> Context:
    return Context(id=_cid(title, text), title=title, text=text, supporting=supporting)


def _read(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise InputFormatError("file not found", path=str(path))
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                if line.strip():
                    try:
                        yield n, json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InputFormatError(f"malformed JSON ({exc.msg})", path=str(path),
                                               line=n) from exc
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputFormatError(f"not valid JSON ({exc.msg})", path=str(path)) from exc
    if not isinstance(data, list):
        raise InputFormatError("expected a list of records", path=str(path))
    yield from enumerate(data, start=1)


def _need(rec: dict[str, Any], key: str, path: Path, n: int) -> Any:
    if not isinstance(rec, dict) or rec.get(key) in (None, "", []):
        raise InputFormatError("missing field", path=str(path), line=n, field=key)
    return rec[key]


def _as_list(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return [str(value)] if str(value).strip() else []


# -- one parser per source format ----------------------------------------------------------
def hotpot_ircot(path: Path) -> Iterator[QARecord]:
    """IRCoT-processed HotpotQA/2Wiki/MuSiQue JSONL (question_text, answers_objects, contexts)."""
    for n, rec in _read(path):
        spans = [s for obj in _need(rec, "answers_objects", path, n) for s in obj.get("spans", [])]
        yield QARecord(
            id=str(_need(rec, "question_id", path, n)),
            question=_need(rec, "question_text", path, n), answers=_as_list(spans),
            contexts=[_ctx(c.get("title", ""), c["paragraph_text"], bool(c.get("is_supporting")))
                      for c in rec.get("contexts", [])])


def hotpot_official(path: Path) -> Iterator[QARecord]:
    """Official HotpotQA (list or column layout of context / supporting_facts)."""
    for n, rec in _read(path):
        ctx, sup = rec.get("context", []), rec.get("supporting_facts", [])
        if isinstance(ctx, dict):  # column layout: {"title": [...], "sentences": [[...]]}
            ctx = list(zip(ctx["title"], ctx["sentences"]))
        if isinstance(sup, dict):
            sup = list(zip(sup["title"], sup["sent_id"]))
        gold_titles = {t for t, _ in sup}
        yield QARecord(
            id=str(rec.get("_id") or rec.get("id") or f"{path.stem}:{n}"),
            question=_need(rec, "question", path, n),
            answers=_as_list(_need(rec, "answer", path, n)),
            contexts=[_ctx(t, "".join(s), t in gold_titles) for t, s in ctx],
            meta={k: rec[k] for k in ("type", "level") if k in rec})


def musique(path: Path) -> Iterator[QARecord]:
    for n, rec in _read(path):
        yield QARecord(
            id=str(_need(rec, "id", path, n)), question=_need(rec, "question", path, n),
            answers=(_as_list(_need(rec, "answer", path, n))
                     + _as_list(rec.get("answer_aliases", []))),
            contexts=[_ctx(p.get("title", ""), p["paragraph_text"], bool(p.get("is_supporting")))
                      for p in rec.get("paragraphs", [])])


def gold_context(path: Path) -> Iterator[QARecord]:
    """PruneRAG layout: {id, Question, answer[], golden_context["Title\\ntext"]} (2Wiki, Bamboogle,
    TriviaQA-500); empty gold contexts are dropped."""
    for n, rec in _read(path):
        contexts = []
        for raw in rec.get("golden_context") or []:
            if raw and raw.strip():
                title, _, text = raw.partition("\n")
                contexts.append(_ctx(title.strip(), text.strip() or title.strip(), True))
        yield QARecord(id=str(rec.get("id", n)), question=_need(rec, "Question", path, n),
                       answers=_as_list(_need(rec, "answer", path, n)), contexts=contexts)


# 2Wiki's comparison and bridge-comparison shapes: "Who was born first, X or Y?", "Which film
# has the director who died later, X or Y?", "Are both X and Y from the same country?"
_COMPARISON = re.compile(r"^(which|who|what)\b[^?]*,\s*.+\s+or\s+.+\?$"
                         r"|^(are|were|do|did|is|was)\b.*\bboth\b", re.IGNORECASE)


def twowiki_comparison(path: Path) -> Iterator[QARecord]:
    """The comparison questions of a PruneRAG-layout 2Wiki file (the file has no type
    field; the question's shape tells them), with their gold paragraphs: real
    multi-entity questions for DocSage."""
    for record in gold_context(path):
        if _COMPARISON.search(record.question.strip()):
            yield record


def question_answer(path: Path) -> Iterator[QARecord]:
    """{question, answer[]} (NQ-open, AmbigQA)."""
    for n, rec in _read(path):
        yield QARecord(id=str(rec.get("id", f"{path.stem}:{n}")),
                       question=_need(rec, "question", path, n),
                       answers=_as_list(_need(rec, "answer", path, n)))


def flashrag(path: Path) -> Iterator[QARecord]:
    """FlashRAG dataset JSONL: {id, question, golden_answers}."""
    for n, rec in _read(path):
        # MedQuAD's ids name a document, not a question (11,386 ids for 14,000 questions)
        yield QARecord(id=f"{rec['id']}@{n}" if rec.get("id") else str(n),
                       question=_need(rec, "question", path, n),
                       answers=_as_list(_need(rec, "golden_answers", path, n)))


def webquestions(path: Path) -> Iterator[QARecord]:
    for n, rec in _read(path):
        yield QARecord(id=str(_need(rec, "qId", path, n)), question=_need(rec, "qText", path, n),
                       answers=_as_list(_need(rec, "answers", path, n)))


def triviaqa_aliases(path: Path) -> Iterator[QARecord]:
    """{qid, question, gold_answer, aliases[]}."""
    for n, rec in _read(path):
        yield QARecord(id=str(_need(rec, "qid", path, n)), question=_need(rec, "question", path, n),
                       answers=_as_list(_need(rec, "gold_answer", path, n))
                       + _as_list(rec.get("aliases", [])))


def medquad(path: Path) -> Iterator[QARecord]:
    for n, rec in _read(path):
        # MedQuAD's ids name a document, not a question (11,386 ids for 14,000 questions)
        yield QARecord(id=f"{rec['id']}@{n}" if rec.get("id") else str(n),
                       question=_need(rec, "question", path, n),
                       answers=[_need(rec, "answer", path, n)], long_form=True)


def huatuo(path: Path) -> Iterator[QARecord]:
    for n, rec in _read(path):
        q = _as_list(_need(rec, "instruction", path, n))
        a = _as_list(_need(rec, "output", path, n))
        yield QARecord(id=str(rec.get("id") or f"huatuo:{n}"), question=q[0], answers=a[:1],
                       long_form=True, meta={"language": "zh"})


def twowiki_pool(path: Path) -> Iterator[QARecord]:
    """2Wiki with its fixed BGE top-10 pool (contexts), answers joined from the gold file."""
    gold = {r.id: r for r in gold_context(path.with_name("2wiki_dev_500_gold_context.json"))}
    for n, rec in _read(path):
        rid = str(_need(rec, "id", path, n))
        g = gold.get(rid)
        if g is None:
            raise InputFormatError(f"id {rid} has no answers in the gold file", path=str(path),
                                   line=n)
        supporting = {c.title.lower() for c in g.contexts}
        contexts = []
        for _, raw in rec.get("context", []):
            title, _, text = raw.partition("\n")
            title = title.strip().strip('"')
            contexts.append(_ctx(title, text.strip(), title.lower() in supporting))
        yield QARecord(id=rid, question=_need(rec, "query", path, n), answers=g.answers,
                       contexts=contexts)


def synth(path: Path) -> Iterator[QARecord]:
    """A synthetic DocSage collection's ``questions.jsonl`` (:mod:`quaderno.eval.synth`); the
    gold object, category, type and bin go to ``meta`` for the ``synth_score`` measure."""
    for n, rec in _read(path):
        gold = _need(rec, "gold", path, n)
        yield QARecord(id=str(_need(rec, "id", path, n)),
                       question=_need(rec, "question", path, n), answers=[str(gold["answer"])],
                       meta={k: rec.get(k) for k in ("category", "type", "bin", "family", "sql",
                                                     "entities")} | {"gold": gold})


FORMATS: dict[str, Callable[[Path], Iterator[QARecord]]] = {
    "hotpot-ircot": hotpot_ircot, "hotpot-official": hotpot_official, "musique": musique,
    "gold-context": gold_context, "question-answer": question_answer, "flashrag": flashrag,
    "webquestions": webquestions, "triviaqa-aliases": triviaqa_aliases, "medquad": medquad,
    "huatuo": huatuo, "2wiki-pool": twowiki_pool, "synth": synth,
    "2wiki-comparison": twowiki_comparison,
}

# name → (file under the data folder, format)
DATASETS: dict[str, tuple[str, str]] = {
    "hotpotqa": ("hotpotqa/hotpotqa_dev_ircot_300.jsonl", "hotpot-ircot"),
    "hotpotqa-official": ("hotpotqa/hotpot_dev_distractor_v1_sample.json", "hotpot-official"),
    "hotpotqa-train": ("hotpotqa/hotpot_train_distractor_100.json", "hotpot-official"),
    "musique": ("musique/musique_ans_dev_60.json", "musique"),
    "2wiki": ("2wikimultihopqa/2wiki_dev_500_gold_context.json", "gold-context"),
    "2wiki-bge-pool": ("2wikimultihopqa/2wiki_dev_500_bge_top10_wiki18.jsonl", "2wiki-pool"),
    "2wiki-comparison": ("2wikimultihopqa/2wiki_dev_500_gold_context.json", "2wiki-comparison"),
    "bamboogle": ("bamboogle/bamboogle_25.json", "gold-context"),
    "nq": ("nq_open/NQ-open.dev.minus-heldout.jsonl", "question-answer"),
    "ambigqa": ("ambigqa/ambigqa_dev_qa.json", "question-answer"),
    "triviaqa": ("triviaqa/triviaqa_500.json", "gold-context"),
    "triviaqa-150": ("triviaqa/triviaqa_sample150.json", "triviaqa-aliases"),
    "webquestions": ("webquestions/webquestions_devtest.json", "webquestions"),
    "flashrag-nq-sample": ("wiki_sample/nq_test_sample.jsonl", "flashrag"),
    "medquad": ("medical_qa/medquad_qa_pairs_14000.jsonl", "medquad"),
    "huatuo": ("medical_qa/huatuo26M_test_5000.json", "huatuo"),
}


def data_dir(explicit: str | Path | None = None) -> Path:
    if explicit:
        return Path(explicit)
    if os.environ.get("QUADERNO_DATA"):
        return Path(os.environ["QUADERNO_DATA"])
    return Path.cwd().parent / "shared" / "data"


def load_dataset(name_or_path: str, *, fmt: str | None = None, limit: int | None = None,
                 data: str | Path | None = None) -> list[QARecord]:
    """Records of a named dataset (see :data:`DATASETS`) or a file with ``fmt``."""
    if name_or_path in DATASETS:
        rel, default_fmt = DATASETS[name_or_path]
        path = data_dir(data) / rel
        fmt = fmt or default_fmt
        if not path.is_file():
            raise NotFoundError(f"dataset {name_or_path!r} expects {path}; pass --data-dir or "
                                "set QUADERNO_DATA to the folder holding the benchmark data")
    else:
        path = Path(name_or_path)
        if fmt is None:
            raise ConfigError(f"{name_or_path!r} is not a known dataset ({', '.join(DATASETS)}); "
                              f"for a file, give --format ({', '.join(FORMATS)})")
    if fmt not in FORMATS:
        raise ConfigError(f"unknown dataset format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be positive, got {limit}")
    out = []
    for record in FORMATS[fmt](path):
        if not record.answers:
            raise InputFormatError(f"record {record.id} has no golden answer", path=str(path))
        out.append(record)
        if limit is not None and len(out) >= limit:
            break
    seen: set[str] = set()
    for r in out:
        if r.id in seen:
            raise InputFormatError(f"duplicate record id {r.id!r}", path=str(path))
        seen.add(r.id)
    return out
