"""Read documents from files into :class:`Chunk` objects.

Supported: FlashRAG corpus JSONL (``{id, contents}`` with a quoted title on the first
line), generic JSONL/JSON with configurable field names, historical QA pairs (question
+ answer, both indexed), and folders of ``.txt``/``.md`` files. Every malformed record
raises :class:`InputFormatError` naming the file, line and field; nothing is written
until a whole source has been read (the knowledge-base store does that).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from quaderno.corpus.chunk import Chunk
from quaderno.errors import ConfigError, InputFormatError

log = logging.getLogger(__name__)

FORMATS = ("flashrag", "jsonl", "qa", "folder")
Format = Literal["flashrag", "jsonl", "qa", "folder"]


def _records(path: Path, skip_invalid: bool = False) -> Iterator[tuple[int, Any]]:
    """Yield (line number, record) from a JSONL file, or (index+1, item) from a JSON list.

    A malformed JSONL line raises, or is logged and skipped with ``skip_invalid``.
    """
    if not path.exists():
        raise InputFormatError("file not found", path=str(path))
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputFormatError(f"not valid JSON ({exc.msg})", path=str(path),
                                   line=exc.lineno) from exc
        if isinstance(data, dict):
            data = data.get("data", data.get("documents"))
        if not isinstance(data, list):
            raise InputFormatError("a .json source must hold a list of records", path=str(path))
        yield from enumerate(data, start=1)
        return
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                if skip_invalid:
                    log.warning("skipping %s line %d: malformed JSON", path, lineno)
                    continue
                raise InputFormatError(f"malformed JSON ({exc.msg})", path=str(path),
                                       line=lineno) from exc
            yield lineno, record


def _field(record: Any, name: str, path: Path, lineno: int, *, required: bool = True) -> Any:
    if not isinstance(record, dict):
        raise InputFormatError(f"expected a JSON object, got {type(record).__name__}",
                               path=str(path), line=lineno)
    if name not in record or record[name] is None:
        if required:
            raise InputFormatError("missing field", path=str(path), line=lineno, field=name)
        return None
    return record[name]


def _text(value: Any, name: str, path: Path, lineno: int) -> str:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = " ".join(value)
    if not isinstance(value, str):
        raise InputFormatError(f"expected text, got {type(value).__name__}", path=str(path),
                               line=lineno, field=name)
    if not value.strip():
        raise InputFormatError("empty document", path=str(path), line=lineno, field=name)
    return value


def split_flashrag_contents(contents: str) -> tuple[str, str]:
    """FlashRAG stores ``"Title"\\ntext``; return (title, text)."""
    head, sep, rest = contents.partition("\n")
    if sep and len(head) >= 2 and head.startswith('"') and head.endswith('"'):
        return head[1:-1], rest
    return "", contents


def load_flashrag(path: str | Path, *, skip_invalid: bool = False) -> Iterator[Chunk]:
    """FlashRAG corpus JSONL: ``{"id": ..., "contents": "\\"Title\\"\\ntext"}``."""
    path = Path(path)
    for lineno, rec in _records(path, skip_invalid):
        try:
            cid = str(_field(rec, "id", path, lineno))
            title, text = split_flashrag_contents(_text(_field(rec, "contents", path, lineno),
                                                        "contents", path, lineno))
            if not text.strip():
                raise InputFormatError("empty document (title only)", path=str(path),
                                       line=lineno, field="contents")
        except InputFormatError:
            if not skip_invalid:
                raise
            log.warning("skipping %s line %d", path, lineno)
            continue
        yield Chunk(id=cid, text=text, title=title, source=f"{path.name}:{lineno}")


def load_jsonl(path: str | Path, *, id_field: str = "id", text_field: str = "text",
               title_field: str | None = "title", skip_invalid: bool = False) -> Iterator[Chunk]:
    """Generic JSONL (or JSON list) with configurable field names.

    A record without ``id_field`` gets ``{file stem}:{line}`` as id; the text field is
    required.
    """
    path = Path(path)
    for lineno, rec in _records(path, skip_invalid):
        try:
            raw_id = _field(rec, id_field, path, lineno, required=False)
            text = _text(_field(rec, text_field, path, lineno), text_field, path, lineno)
            title = _field(rec, title_field, path, lineno, required=False) if title_field else None
        except InputFormatError:
            if not skip_invalid:
                raise
            log.warning("skipping %s line %d", path, lineno)
            continue
        cid = str(raw_id) if raw_id is not None else f"{path.stem}:{lineno}"
        yield Chunk(id=cid, text=text, title=str(title or ""), source=f"{path.name}:{lineno}")


def load_qa_pairs(path: str | Path, *, question_field: str = "question",
                  answer_field: str = "answer", id_field: str = "id",
                  skip_invalid: bool = False) -> Iterator[Chunk]:
    """Historical question-answer pairs; the indexed text holds both question and answer.

    ``question``/``answer`` may also be one-element lists (Huatuo-26M's layout). A record
    without an id (or with an empty one) gets ``{file stem}:{line}``; an id already used by an
    earlier pair gets ``@{line}`` appended (QA files such as MedQuAD reuse a document's id for
    each of its questions).
    """
    path = Path(path)
    seen: set[str] = set()
    for lineno, rec in _records(path, skip_invalid):
        try:
            question = _text(_field(rec, question_field, path, lineno), question_field, path,
                             lineno)
            answer = _text(_field(rec, answer_field, path, lineno), answer_field, path, lineno)
        except InputFormatError:
            if not skip_invalid:
                raise
            log.warning("skipping %s line %d", path, lineno)
            continue
        raw_id = rec.get(id_field)
        cid = str(raw_id) if raw_id not in (None, "") else f"{path.stem}:{lineno}"
        if cid in seen:
            cid = f"{cid}@{lineno}"
        seen.add(cid)
        yield Chunk(id=cid, text=f"Question: {question.strip()}\nAnswer: {answer.strip()}",
                    title=question.strip(), source=f"{path.name}:{lineno}",
                    meta={"question": question.strip(), "answer": answer.strip()})


def load_folder(path: str | Path, *, patterns: tuple[str, ...] = ("*.txt", "*.md"),
                skip_invalid: bool = False) -> Iterator[Chunk]:
    """Every ``.txt``/``.md`` file below a folder is one document; id = relative path."""
    root = Path(path)
    if not root.is_dir():
        raise InputFormatError("not a folder", path=str(root))
    files = sorted({p for pattern in patterns for p in root.rglob(pattern) if p.is_file()})
    if not files:
        raise InputFormatError(f"no files matching {', '.join(patterns)}", path=str(root))
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            if not skip_invalid:
                raise InputFormatError(f"not UTF-8 text ({exc.reason})", path=str(file)) from exc
            log.warning("skipping non-UTF-8 file %s", file)
            continue
        if not text.strip():
            if not skip_invalid:
                raise InputFormatError("empty document", path=str(file))
            log.warning("skipping empty file %s", file)
            continue
        rel = file.relative_to(root).as_posix()
        yield Chunk(id=rel, text=text, title=_title_of(file, text), source=rel)


def _title_of(file: Path, text: str) -> str:
    if file.suffix == ".md":
        for line in text.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return file.stem.replace("_", " ")


def load(path: str | Path, fmt: str, **options: Any) -> Iterator[Chunk]:
    """Load ``path`` with the loader named by ``fmt`` (one of :data:`FORMATS`)."""
    loaders = {"flashrag": load_flashrag, "jsonl": load_jsonl, "qa": load_qa_pairs,
               "folder": load_folder}
    if fmt not in loaders:
        raise ConfigError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return loaders[fmt](path, **options)


def guess_format(path: str | Path) -> str:
    """Guess a loader from a path: folder, or the fields of the first record."""
    path = Path(path)
    if path.is_dir():
        return "folder"
    for _, rec in _records(path):
        if isinstance(rec, dict):
            if "contents" in rec:
                return "flashrag"
            if "question" in rec and "answer" in rec:
                return "qa"
        return "jsonl"
    raise InputFormatError("no records", path=str(path))
