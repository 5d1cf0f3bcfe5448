"""PAGER's page: a title and sections (slots) that are filled one by one.

The page is a typed object that renders to the paper's markdown::

    # Title

    ## Section
    <TO BE FILLED>

Each filled section keeps the sub-query and the chunk ids that filled it (provenance).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from quaderno.llm.parsing import Outline

PLACEHOLDER = "<TO BE FILLED>"
_PLACEHOLDER = re.compile(r"<\s*to\s+be\s+filled\s*>", re.I)


def has_placeholder(text: str) -> bool:
    return bool(_PLACEHOLDER.search(text))


def strip_placeholder(text: str) -> str:
    return _PLACEHOLDER.sub("", text).strip()


class Section(BaseModel):
    title: str
    content: str = ""
    filled: bool = False
    sub_query: str | None = None
    chunk_ids: list[str] = Field(default_factory=list)

    def render(self) -> str:
        return f"## {self.title}\n{self.content if self.filled else PLACEHOLDER}"


class Page(BaseModel):
    title: str
    sections: list[Section]

    @classmethod
    def from_outline(cls, outline: Outline, *, fallback_title: str = "") -> Page:
        """Sections whose content is only the placeholder (or empty) start unfilled."""
        sections = []
        for s in outline.sections:
            body = strip_placeholder(s.content)
            if has_placeholder(s.content) or not body:
                sections.append(Section(title=s.title))
            else:
                sections.append(Section(title=s.title, content=body, filled=True))
        return cls(title=outline.title or fallback_title, sections=sections)

    def render(self) -> str:
        parts = [f"# {self.title}"] if self.title else []
        parts += [s.render() for s in self.sections]
        return "\n\n".join(parts)

    def first_unfilled(self) -> int | None:
        return next((i for i, s in enumerate(self.sections) if not s.filled), None)

    @property
    def complete(self) -> bool:
        return self.first_unfilled() is None

    def filled_sections(self) -> list[Section]:
        return [s for s in self.sections if s.filled]

    def fill(self, index: int, content: str, *, sub_query: str | None,
             chunk_ids: list[str]) -> None:
        section = self.sections[index]
        section.content = content.strip()
        section.filled = True
        section.sub_query = sub_query
        section.chunk_ids = list(chunk_ids)
