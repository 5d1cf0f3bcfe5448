"""Recipes: the knowledge bases of the missing-knowledge experiments, built from the benchmark data.

A recipe is a named declaration (:data:`RECIPES`) whose ``chunks`` function reads files from
the data folder (``--data-dir``, ``$QUADERNO_DATA``, else ``../shared/data``, as ``quaderno
eval``) and yields chunks for :meth:`Workspace.add_kb`; :func:`build_recipe` stores them and
returns a :class:`RecipeReport` (records read, kept, dropped as evaluation leaks, deduplicated).

**Evaluation exclusion.** Every recipe is built against one evaluation slice: the questions
``load_dataset(eval_dataset, limit=eval_limit)`` returns, i.e. exactly what ``quaderno eval
--dataset D --limit N`` answers (the first N records of the dataset file; no limit: all of
them, the default and the safest). A record is dropped when

* it *is* one of those records (same file, among its first N records): counted ``evaluation``;
* otherwise, its normalized question (lowercase, punctuation removed, whitespace collapsed)
  has the MD5 of an evaluation question, or, when the evaluation answers are passages
  (MedQuAD, Huatuo), its answer text has the MD5 of an evaluation answer: counted ``leaks``.

So ``nq-qa`` for ``--eval-dataset nq --eval-limit 100`` holds NQ-open dev records 101..3110
plus EfficientQA, minus any pair asking an evaluation question again. Passages carry no
question of their own and are not screened, except MedQuAD answer texts (below).

**MedQuAD split.** One record goes to the QA-pair half when the first 8 hex digits of its
normalized-question MD5 are even, else to the passage half (:func:`medquad_half`). The split
is by question, so the same question asked twice lands in the same half and the two KBs
never share a question; it does not depend on the evaluation slice, so each half keeps the
same records whatever the slice, less that slice's leaks.

**Chunks.** QA pairs are one chunk each, made as :func:`~quaderno.corpus.loaders.load_qa_pairs`
makes them (``Question: …\\nAnswer: …``, title = question, meta ``{question, answer}``); an
NQ answer list is joined with ``", "`` (spec A4). Passages are split into chunks of fewer than
300 words with no overlap (spec A3); every KB is MD5-deduplicated by ``add_kb``.

**Merges** (``nq-merged``, ``medical-merged``) are built from the data, not from stored KBs,
so both parts surely exclude the same evaluation slice; their chunks equal those of
``Workspace.merge_kbs(name, [passages, qa])`` over KBs built by the part recipes under their
own names (ids ``{part}/{id}``, meta ``origin_kb``/``origin_kind``), passages first.
"""

from __future__ import annotations

import hashlib
import logging
import string
import unicodedata
from collections.abc import Callable, Iterator
from functools import partial
from importlib import resources
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from quaderno.corpus.chunk import Chunk, KBKind, text_md5
from quaderno.corpus.chunking import WordChunker
from quaderno.corpus.loaders import _field, _records, _text, load_flashrag, load_jsonl
from quaderno.errors import ConfigError, InputFormatError, NotFoundError
from quaderno.eval.datasets import DATASETS, data_dir, hotpot_ircot, load_dataset

if TYPE_CHECKING:
    from quaderno.workspace import Workspace

log = logging.getLogger(__name__)

PASSAGE_MAX_WORDS = 299  # "chunks of <300 words" (spec O1, A3)
NQ_DEV = "nq_open/NQ-open.dev.minus-heldout.jsonl"
NQ_EFFICIENTQA = "nq_open/NQ-open.efficientqa.dev.1.1.jsonl"
TWOWIKI_CORPUS = "2wikimultihopqa/corpus_6119.json"
HOTPOT_IRCOT = "hotpotqa/hotpotqa_dev_ircot_300.jsonl"
MEDQUAD = "medical_qa/medquad_qa_pairs_14000.jsonl"
HUATUO = "medical_qa/huatuo26M_test_5000.json"
WIKI_SAMPLE = "bundled:wiki_sample/wiki_sample_1000.jsonl"
_ASCII_PUNCT = frozenset(string.punctuation)


def normalize_question(question: str) -> str:
    """Lowercase, drop punctuation (ASCII and every Unicode P* character), collapse spaces."""
    kept = (c for c in question.lower()
            if c not in _ASCII_PUNCT and not unicodedata.category(c).startswith("P"))
    return " ".join("".join(kept).split())


def question_md5(question: str) -> str:
    """The leak key: MD5 of the normalized question."""
    return hashlib.md5(normalize_question(question).encode("utf-8")).hexdigest()


def medquad_half(question: str) -> Literal["qa", "passage"]:
    """Which half of MedQuAD a question belongs to (stable: parity of its MD5 prefix)."""
    return "qa" if int(question_md5(question)[:8], 16) % 2 == 0 else "passage"


class EvalExclusion(BaseModel):
    """The evaluation slice a KB must not contain."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    limit: int | None
    path: Path  # the dataset file; its first ``size`` records are the slice
    size: int
    questions: frozenset[str]  # question_md5 of every evaluation question
    answers: frozenset[str]  # text_md5 of every long-form evaluation answer (else empty)

    @classmethod
    def load(cls, dataset: str, limit: int | None = None,
             data: str | Path | None = None) -> EvalExclusion:
        if dataset not in DATASETS:
            raise ConfigError(f"unknown evaluation dataset {dataset!r}; choose one of "
                              f"{', '.join(DATASETS)}")
        records = load_dataset(dataset, limit=limit, data=data)
        return cls(dataset=dataset, limit=limit, path=data_dir(data) / DATASETS[dataset][0],
                   size=len(records),
                   questions=frozenset(question_md5(r.question) for r in records),
                   answers=frozenset(text_md5(a) for r in records if r.long_form
                                     for a in r.answers))

    def label(self) -> str:
        return f"{self.dataset}[:{self.limit}]" if self.limit else f"{self.dataset} (all)"


class RecipeCounts(BaseModel):
    """What happened to the source records of one build (one instance per build)."""

    read: int = 0
    evaluation: int = 0  # the evaluation records themselves
    leaks: int = 0  # other records asking an evaluation question (or giving its long answer)
    other_half: int = 0  # MedQuAD records that belong to the other half
    kept: int = 0


class RecipeContext(BaseModel):
    """What a recipe's ``chunks`` function reads from and reports to."""

    data: Path
    exclusion: EvalExclusion
    counts: RecipeCounts
    parts: dict[str, RecipeCounts] = {}  # a merge's counts, per part

    def part(self, name: str) -> RecipeContext:
        """A context for one part of a merge, counting apart."""
        self.parts[name] = RecipeCounts()
        return RecipeContext(data=self.data, exclusion=self.exclusion, counts=self.parts[name])

    def totals(self) -> RecipeCounts:
        """This build's counts; for a merge, summed over its parts."""
        if not self.parts:
            return self.counts
        fields = RecipeCounts.model_fields
        return RecipeCounts(**{f: sum(getattr(c, f) for c in self.parts.values())
                               for f in fields})

    def path(self, source: str) -> Path:
        if source.startswith("bundled:"):
            return Path(str(resources.files("quaderno") / "data" / source[len("bundled:"):]))
        return self.data / source

    def screen(self, path: Path, ordinal: int, question: str, answer: str | None = None) -> bool:
        """Count one record; True when it may go into the KB."""
        self.counts.read += 1
        ex = self.exclusion
        if ordinal < ex.size and path.resolve() == ex.path.resolve():
            self.counts.evaluation += 1
            return False
        if question_md5(question) in ex.questions or (
                answer is not None and ex.answers and text_md5(answer) in ex.answers):
            self.counts.leaks += 1
            return False
        return True

    def keep(self, chunk: Chunk) -> Chunk:
        self.counts.kept += 1
        return chunk


class Recipe(BaseModel):
    """A named KB recipe: where its chunks come from and how they are stored."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    kind: KBKind
    eval_dataset: str  # the evaluation it is meant for; the default exclusion
    sources: tuple[str, ...]  # files under the data folder, or bundled:…
    chunks: Callable[[RecipeContext], Iterator[Chunk]]
    max_words: int | None = PASSAGE_MAX_WORDS


class RecipeReport(BaseModel):
    recipe: str
    kb: str
    kind: str
    eval_dataset: str
    eval_limit: int | None
    eval_questions: int
    read: int
    evaluation: int
    leaks: int
    other_half: int
    kept: int
    duplicates: int
    chunks: int
    sources: list[str]
    parts: dict[str, RecipeCounts] = {}  # a merge's counts per part (totals are their sums)

    @property
    def dropped_as_leaks(self) -> int:
        return self.evaluation + self.leaks


# -- readers ------------------------------------------------------------------------------------
def qa_chunk(path: Path, lineno: int, question: str, answer: str) -> Chunk:
    """A QA-pair chunk exactly as ``load_qa_pairs`` makes it for a record without an id."""
    q, a = question.strip(), answer.strip()
    return Chunk(id=f"{path.stem}:{lineno}", text=f"Question: {q}\nAnswer: {a}", title=q,
                 source=f"{path.name}:{lineno}", meta={"question": q, "answer": a})


def _answer_list(rec: dict[str, Any], path: Path, lineno: int) -> str:
    """NQ's ``answer`` list joined with ", " (spec A4)."""
    value = _field(rec, "answer", path, lineno)
    answers = [value] if isinstance(value, str) else value
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise InputFormatError("expected a list of answer strings", path=str(path), line=lineno,
                               field="answer")
    return _text(", ".join(a.strip() for a in answers if a.strip()), "answer", path, lineno)


def _nq_qa(ctx: RecipeContext) -> Iterator[Chunk]:
    for source in (NQ_DEV, NQ_EFFICIENTQA):
        path = ctx.path(source)
        for ordinal, (lineno, rec) in enumerate(_records(path)):
            question = _text(_field(rec, "question", path, lineno), "question", path, lineno)
            answer = _answer_list(rec, path, lineno)
            if ctx.screen(path, ordinal, question):
                yield ctx.keep(qa_chunk(path, lineno, question, answer))


def _nq_passages(ctx: RecipeContext) -> Iterator[Chunk]:
    wiki = ctx.path(WIKI_SAMPLE)
    for chunk in load_flashrag(wiki):
        ctx.counts.read += 1
        yield ctx.keep(chunk.model_copy(update={"id": f"wiki18:{chunk.id}"}))
    for chunk in load_jsonl(ctx.path(TWOWIKI_CORPUS), id_field="id", text_field="text",
                            title_field="title"):
        ctx.counts.read += 1
        yield ctx.keep(chunk)
    hotpot = ctx.path(HOTPOT_IRCOT)
    for record in hotpot_ircot(hotpot):
        for para in record.contexts:
            ctx.counts.read += 1
            yield ctx.keep(Chunk(id=f"hotpotqa:{para.id}", text=para.text, title=para.title,
                                 source=f"{hotpot.name}:{record.id}"))


def _medquad(ctx: RecipeContext, half: Literal["qa", "passage"]) -> Iterator[Chunk]:
    path = ctx.path(MEDQUAD)
    for ordinal, (lineno, rec) in enumerate(_records(path)):
        question = _text(_field(rec, "question", path, lineno), "question", path, lineno)
        answer = _text(_field(rec, "answer", path, lineno), "answer", path, lineno)
        if not ctx.screen(path, ordinal, question, answer):
            continue
        if medquad_half(question) != half:
            ctx.counts.other_half += 1
            continue
        if half == "qa":
            yield ctx.keep(qa_chunk(path, lineno, question, answer))
            continue
        yield ctx.keep(Chunk(
            id=f"{path.stem}:{lineno}", text=" ".join(answer.split()),
            title=str(rec.get("focus") or ""), source=f"{path.name}:{lineno}",
            meta={"focus": rec.get("focus") or "", "qtype": rec.get("qtype") or "",
                  "url": rec.get("url") or "", "record_id": str(rec.get("id") or ""),
                  "question_md5": question_md5(question)}))


def _huatuo_qa(ctx: RecipeContext) -> Iterator[Chunk]:
    path = ctx.path(HUATUO)
    for ordinal, (lineno, rec) in enumerate(_records(path)):
        question = _text(_field(rec, "instruction", path, lineno), "instruction", path, lineno)
        answer = _text(_field(rec, "output", path, lineno), "output", path, lineno)
        if ctx.screen(path, ordinal, question, answer):
            yield ctx.keep(qa_chunk(path, lineno, question, answer))


def _merged(*parts: str) -> Callable[[RecipeContext], Iterator[Chunk]]:
    """Chunks of ``parts`` as ``Workspace.merge_kbs`` would store KBs built by those recipes."""

    def chunks(ctx: RecipeContext) -> Iterator[Chunk]:
        for name in parts:
            part = RECIPES[name]
            stream = part.chunks(ctx.part(name))
            if part.kind is not KBKind.qa_pair and part.max_words:
                stream = WordChunker(part.max_words)(stream)
            for chunk in stream:
                yield chunk.model_copy(update={
                    "id": f"{name}/{chunk.id}",
                    "meta": {**chunk.meta, "origin_kb": name, "origin_kind": part.kind.value}})

    return chunks


RECIPES: dict[str, Recipe] = {r.name: r for r in (
    Recipe(name="nq-qa", kind=KBKind.qa_pair, eval_dataset="nq",
           description="historical QA pairs: NQ-open dev questions not used for evaluation, "
                       "plus EfficientQA dev",
           sources=(NQ_DEV, NQ_EFFICIENTQA), chunks=_nq_qa, max_words=None),
    Recipe(name="nq-passages", kind=KBKind.passage, eval_dataset="nq",
           description="Wikipedia passages: the bundled DPR sample, 2Wiki's corpus, HotpotQA "
                       "(IRCoT dev 300) context paragraphs",
           sources=(WIKI_SAMPLE, TWOWIKI_CORPUS, HOTPOT_IRCOT), chunks=_nq_passages),
    Recipe(name="nq-merged", kind=KBKind.mixed, eval_dataset="nq",
           description="nq-passages + nq-qa in one KB",
           sources=(WIKI_SAMPLE, TWOWIKI_CORPUS, HOTPOT_IRCOT, NQ_DEV, NQ_EFFICIENTQA),
           chunks=_merged("nq-passages", "nq-qa"), max_words=None),
    Recipe(name="medquad-qa", kind=KBKind.qa_pair, eval_dataset="medquad",
           description="MedQuAD QA pairs of the QA half (question-MD5 parity), minus evaluation",
           sources=(MEDQUAD,), chunks=partial(_medquad, half="qa"), max_words=None),
    Recipe(name="medquad-passages", kind=KBKind.passage, eval_dataset="medquad",
           description="MedQuAD answer texts of the passage half as passages (<300 words, "
                       "title = focus), minus evaluation",
           sources=(MEDQUAD,), chunks=partial(_medquad, half="passage")),
    Recipe(name="medical-merged", kind=KBKind.mixed, eval_dataset="medquad",
           description="medquad-passages + medquad-qa in one KB",
           sources=(MEDQUAD,), chunks=_merged("medquad-passages", "medquad-qa"),
           max_words=None),
    Recipe(name="huatuo-qa", kind=KBKind.qa_pair, eval_dataset="huatuo",
           description="Huatuo-26M test consultations (Chinese) as QA pairs, minus evaluation",
           sources=(HUATUO,), chunks=_huatuo_qa, max_words=None),
)}


def get_recipe(name: str) -> Recipe:
    if name not in RECIPES:
        raise ConfigError(f"unknown recipe {name!r}; choose one of {', '.join(RECIPES)} "
                          "(quaderno kb recipe --list describes them)")
    return RECIPES[name]


def build_recipe(ws: Workspace, name: str, *, kb: str | None = None,
                 eval_dataset: str | None = None, eval_limit: int | None = None,
                 data: str | Path | None = None, replace: bool = False,
                 progress: Callable[[int], None] | None = None) -> RecipeReport:
    """Build recipe ``name`` into workspace ``ws`` as KB ``kb`` (default: the recipe's name).

    The evaluation slice kept out is ``eval_dataset`` (default: the recipe's) limited to its
    first ``eval_limit`` questions (default: all). Nothing is stored when the recipe keeps
    no record or a source is malformed.
    """
    recipe = get_recipe(name)
    root = data_dir(data)
    exclusion = EvalExclusion.load(eval_dataset or recipe.eval_dataset, eval_limit, data)
    ctx = RecipeContext(data=root, exclusion=exclusion, counts=RecipeCounts())
    paths = [ctx.path(s) for s in recipe.sources]
    for path in paths:
        if not path.is_file():
            raise NotFoundError(f"recipe {name!r} needs {path}; pass --data-dir or set "
                                "QUADERNO_DATA to the folder holding the benchmark data")
    stream = recipe.chunks(ctx)
    first = next(stream, None)
    if first is None:
        c = ctx.totals()
        raise ConfigError(
            f"recipe {name!r} kept none of the {c.read} records it read: {c.evaluation} are the "
            f"evaluation slice {exclusion.label()}, {c.leaks} repeat an evaluation question, "
            f"{c.other_half} belong to the other half; pass --eval-limit N to keep only the "
            "first N questions for evaluation")
    target = kb or recipe.name
    stored = ws.add_kb(
        target, chain([first], stream), kind=recipe.kind, replace=replace,
        max_words=recipe.max_words, overlap=0, dedup=True,
        description=f"recipe {name}: {recipe.description}; evaluation kept out: "
                    f"{exclusion.label()}, {exclusion.size} questions",
        sources=[*map(str, paths), f"exclude:{exclusion.label()}"], progress=progress)
    c = ctx.totals()
    report = RecipeReport(
        recipe=name, kb=target, kind=recipe.kind.value, eval_dataset=exclusion.dataset,
        eval_limit=eval_limit, eval_questions=exclusion.size, read=c.read,
        evaluation=c.evaluation, leaks=c.leaks, other_half=c.other_half, kept=c.kept,
        duplicates=int(stored.manifest["duplicates_dropped"]), chunks=len(stored),
        sources=[str(p) for p in paths], parts=ctx.parts)
    log.info("recipe %s -> %s: %s", name, target, report.model_dump_json())
    return report
