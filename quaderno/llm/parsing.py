"""Tolerant parsers for model replies: JSON objects, tagged spans, markdown outlines.

Each parser returns a valid value or raises :class:`ParseError` with a message that can
be shown to the model in a repair re-ask; none raises anything else, whatever the input
(see tests/test_parsing_adversarial.py and its 200+ adversarial replies).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from quaderno.errors import ParseError

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.S)
_THINK = re.compile(r"<think>.*?</think>\s*", re.S | re.I)
_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.S | re.I)
_THINK_OR_UNCLOSED = re.compile(r"<think>.*?(?:</think>\s*|\Z)", re.S | re.I)


def strip_thinking(text: str, *, unclosed: bool = True) -> str:
    """Drop ``<think>…</think>`` blocks (Qwen3, DeepSeek-R1 style reasoning) and the
    whitespace after them. ``unclosed`` also drops a block cut off by the token limit:
    a parser wants that, while a backend returns it so the truncation stays visible."""
    return (_THINK_OR_UNCLOSED if unclosed else _THINK).sub("", text)


def thinking_of(text: str) -> str:
    """The text inside the closed ``<think>…</think>`` blocks of a reply (what
    :func:`strip_thinking` removes), joined by blank lines."""
    return "\n\n".join(m.group(1).strip() for m in _THINK_BLOCK.finditer(text)
                       if m.group(1).strip())


def _balanced_spans(text: str, open_ch: str, close_ch: str) -> list[str]:
    """Top-level ``{...}``/``[...]`` spans, string-aware; an unclosed span runs to the end."""
    spans = []
    depth = 0
    start = -1
    in_str = False
    quote = ""
    escape = False
    for i, ch in enumerate(text):
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                in_str = False
            continue
        if ch in "\"'" and depth > 0:
            # a single quote inside a word (don't, it's) is not a string delimiter
            if ch == "'" and i > 0 and text[i - 1].isalnum():
                continue
            in_str, quote = True, ch
        elif ch == open_ch:
            if depth == 0:
                start = i
            depth += 1
        elif ch == close_ch and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start:i + 1])
    if depth > 0 and start >= 0:
        spans.append(text[start:])
    return spans


def _candidates(text: str) -> list[str]:
    cands = []
    for _lang, body in _FENCE.findall(text):
        if body.strip():
            cands.append(body.strip())
    cands.append(text.strip())
    for source in list(cands):
        cands.extend(_balanced_spans(source, "{", "}"))
    return list(dict.fromkeys(c for c in cands if c))


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a reply: bare, fenced, inside prose, with trailing commas, single
    quotes or a truncated end (repaired with json-repair). Raises ParseError otherwise."""
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    text = strip_thinking(text)
    if not text.strip():
        raise ParseError("the reply is empty")
    candidates = _candidates(text)
    for cand in candidates:
        try:
            value = json.loads(cand)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    from json_repair import repair_json

    for cand in candidates:
        if "{" not in cand:
            continue
        try:
            value = repair_json(cand[cand.index("{"):], return_objects=True)
        except (ValueError, RecursionError, IndexError, TypeError, AttributeError):
            continue
        if isinstance(value, dict) and value:
            return value
    raise ParseError("no JSON object found in the reply")


def _lower_keys(data: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """Map keys that differ only in case, spaces or dashes onto the model's field names."""
    norm = {re.sub(r"[\s\-]+", "_", k.strip().lower()): k for k in data}
    out = dict(data)
    for name in model.model_fields:
        if name not in out and name.lower() in norm:
            out[name] = data[norm[name.lower()]]
    return out


def parse_model(text: str, model: type[M]) -> M:
    """Parse a reply into ``model``: tolerant JSON, then pydantic validation."""
    data = parse_json_object(text)
    data = _lower_keys(data, model)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'object'}: {e['msg']}" for e in exc.errors())
        raise ParseError(f"the JSON does not match the expected fields ({problems})") from None


def extract_tag(text: str, tag: str, *, last: bool = True) -> str:
    """Text inside ``<tag>…</tag>`` (the last one by default; an unclosed final tag runs to
    the end). Raises ParseError when the tag is absent or empty."""
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    text = strip_thinking(text)
    pattern = re.compile(rf"<{tag}>(.*?)</{tag}>", re.S | re.I)
    found = pattern.findall(text)
    if not found:
        opened = re.split(rf"<{tag}>", text, flags=re.I)
        if len(opened) > 1:
            found = [opened[-1]]
    if not found:
        raise ParseError(f"no <{tag}>…</{tag}> in the reply")
    value = (found[-1] if last else found[0]).strip()
    if not value:
        raise ParseError(f"<{tag}> is empty")
    return value


class OutlineSection(BaseModel):
    title: str
    content: str = ""


class Outline(BaseModel):
    title: str
    sections: list[OutlineSection]
    # how the sections were found: markdown headings, **bold** lines, or a numbered/bulleted
    # list (small models); a caller may record the last two as repairs
    form: Literal["headings", "bold", "list"] = "headings"


_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s*(.*?)\s*#*\s*$")
_BOLD_HEADING = re.compile(r"^\s*(?:\d+[.)]\s*)?\*\*(.+?)\*\*:?\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+?)\s*$")


def _looks_like_outline(text: str) -> bool:
    """Whether ``text`` holds a heading, a bold heading line or a list of two items."""
    lines = text.splitlines()
    return (any((m := _HEADING.match(ln)) and m.group(2) for ln in lines)
            or any(_BOLD_HEADING.match(ln) for ln in lines)
            or sum(1 for ln in lines if _LIST_ITEM.match(ln)) >= 2)


def parse_outline(text: str, *, min_sections: int = 1) -> Outline:
    """A markdown page: ``# Title`` then ``## Section`` blocks with their content.

    Tolerates ``<OUTLINE>``/code-fence wrappers, prose before the title, a missing title
    (then ``title`` is empty), any pair of heading levels (one top heading = the title),
    and ``**Bold**`` lines as section headings when there are no ``#`` headings.
    """
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    text = strip_thinking(text)
    inner = re.search(r"<outline>(.*?)(</outline>|\Z)", text, re.S | re.I)
    # a closed <OUTLINE>…</OUTLINE> holding a page wraps it; an unclosed one does only when
    # no page began before it (a stray marker in the middle of a page is not a wrapper)
    if inner and _looks_like_outline(inner.group(1)) and (
            inner.group(2) or not _looks_like_outline(text[:inner.start()])):
        text = inner.group(1)
    elif inner:  # a stray <OUTLINE> after the page or inside it (seen from the measuring
        # model: the page, then "<OUTLINE>" and chatter) wraps nothing: the page is the reply
        text = re.sub(r"</?outline>", "", text, flags=re.I)
    fenced = _FENCE.findall(text)
    if fenced and any("#" in body for _, body in fenced):
        text = next(body for _, body in fenced if "#" in body)
    lines = text.splitlines()
    headings = [(i, len(m.group(1)), m.group(2)) for i, line in enumerate(lines)
                if (m := _HEADING.match(line)) and m.group(2)]
    form = "headings"
    if not headings:
        headings = [(i, 2, m.group(1).strip()) for i, line in enumerate(lines)
                    if (m := _BOLD_HEADING.match(line))]
        form = "bold"
    if not headings:
        items = [m.group(1).strip() for line in lines if (m := _LIST_ITEM.match(line))]
        if len(items) >= max(2, min_sections):  # a numbered or bulleted outline: each item
            # a section; no title (the text around a list is chatter, not a page title)
            return Outline(title="", form="list",
                           sections=[OutlineSection(title=t) for t in items])
    if not headings:
        raise ParseError("no markdown headings (# Title / ## Section) in the reply")
    levels = sorted({level for _, level, _ in headings})
    title = ""
    if levels[0] < max(levels) and sum(1 for _, lv, _ in headings if lv == levels[0]) == 1:
        title_idx = next(h for h in headings if h[1] == levels[0])
        title = title_idx[2]
        section_level = levels[1]
    else:
        section_level = levels[0]
    sec_heads = [(i, t) for i, lv, t in headings if lv == section_level]
    sections = []
    for n, (i, head) in enumerate(sec_heads):
        end = sec_heads[n + 1][0] if n + 1 < len(sec_heads) else len(lines)
        body = "\n".join(lines[i + 1:end]).strip()
        body = re.sub(r"</?outline>\s*$", "", body, flags=re.I).strip()
        sections.append(OutlineSection(title=head, content=body))
    if len(sections) < min_sections:
        raise ParseError(f"the outline has {len(sections)} sections, at least {min_sections} "
                         "are needed")
    return Outline(title=title, sections=sections, form=form)
