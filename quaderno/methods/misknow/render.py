"""How retrieved chunks are shown to the reader and reasoner (Tables 6 and 7): passages as
``Document[i]: title`` + text, historical QA pairs as ``Qi: … Ai: …``, numbered apart."""

from __future__ import annotations

from collections.abc import Sequence

from quaderno.index.hits import Hit


def is_qa_pair(hit: Hit) -> bool:
    meta = hit.chunk.meta
    return bool(meta.get("question")) and "answer" in meta


def render_contexts(hits: Sequence[Hit]) -> str:
    if not hits:
        return "(no contexts were retrieved)"
    lines, docs, pairs = [], 0, 0
    for hit in hits:
        chunk = hit.chunk
        if is_qa_pair(hit):
            pairs += 1
            lines.append(f"Q{pairs}: {chunk.meta['question']} A{pairs}: {chunk.meta['answer']}")
        else:
            docs += 1
            body = f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text
            lines.append(f"Document[{docs}]: {body}")
    return "\n".join(lines)
