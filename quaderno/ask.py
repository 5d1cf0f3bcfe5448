"""`ask`: one call that answers a question with any method over any knowledge bases.

    from quaderno.ask import ask
    answer = ask("who got the first nobel prize in physics", method="pager", kbs=["wiki"])
    print(answer.answer, answer.page.render())
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from quaderno.llm.config import LLMConfig, make_lm
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.base import Answer
from quaderno.methods.registry import NEEDS_RETRIEVAL, make_method
from quaderno.workspace import Workspace


async def aask(question: str, *, method: str = "pager", kbs: Sequence[str] | None = None,
               mode: str = "auto", k: int = 5, lm: LM | None = None,
               llm: LLMConfig | None = None, workspace: Workspace | None = None,
               home: str | Path | None = None, trace: Trace | None = None,
               **options: Any) -> Answer:
    """Answer ``question`` with ``method`` over ``kbs`` (default: every KB of the workspace)."""
    ws = workspace or Workspace(home)
    if lm is None:
        lm = make_lm(llm or LLMConfig(), cache_path=ws.root / "cache" / "llm.sqlite")
    retriever = None
    if method in NEEDS_RETRIEVAL:
        names = list(kbs) if kbs else ws.kb_names()
        retriever = ws.retriever(names, mode=mode) if names else None
    runner = make_method(method, lm, retriever, **({"k": k} if method in NEEDS_RETRIEVAL else {}),
                         **options)
    return await runner.answer(question, trace=trace or Trace(label=question))


def ask(question: str, **kwargs: Any) -> Answer:
    """Synchronous :func:`aask`."""
    return asyncio.run(aask(question, **kwargs))
