"""`ask`: one call that answers a question with any method over any knowledge bases.

    from quaderno.ask import ask
    answer = ask("Who was Enrico Fermi?", method="pager", kbs=["wiki"])
    print(answer.answer, answer.page.render())
    ask("...", method="pager", options={"fill_mode": "section", "max_iters": 4})
    ask("...", method="vanilla-rag", gate="gates/webq")   # CCSK decides whether to retrieve
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quaderno.llm.config import LLMConfig, make_lm
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.answer import Answer
from quaderno.methods.registry import get_spec, make_method
from quaderno.workspace import Workspace

if TYPE_CHECKING:
    from quaderno.gate.protocol import Gate


async def aask(question: str, *, method: str = "pager", kbs: Sequence[str] | None = None,
               mode: str = "auto", k: int | None = None, lm: LM | None = None,
               llm: LLMConfig | None = None, workspace: Workspace | None = None,
               home: str | Path | None = None, trace: Trace | None = None,
               options: Mapping[str, Any] | None = None, roles: Mapping[str, LM] | None = None,
               gate: str | Gate | None = None, gate_allow_other_llm: bool = False,
               **more: Any) -> Answer:
    """Answer ``question`` with ``method`` over ``kbs`` (default: every KB of the workspace).

    ``options`` (and keyword options) are the method's own, checked against its spec
    (``quaderno methods`` lists them); ``k``, when given, applies to every method that
    retrieves (else each method's default).
    ``roles`` gives LMs for the method's other roles (``{"reasoner": lm}``).
    ``gate`` (``always``, ``never``, a trained gate directory, ``DIR:GATE`` or a
    :class:`~quaderno.gate.protocol.Gate`) decides first whether to retrieve at all: when it
    says no, the closed-book answer is returned (``answer.gate`` holds the decision). A gate
    trained on another LLM's labels is refused unless ``gate_allow_other_llm``."""
    spec = get_spec(method)
    ws = workspace or Workspace(home)
    if lm is None:
        lm = make_lm(llm or LLMConfig(), cache_path=ws.root / "cache" / "llm.sqlite")
    retriever = None
    chosen = {**dict(options or {}), **more}
    if spec.needs_retrieval:
        names = list(kbs) if kbs else ws.kb_names()
        retriever = ws.retriever(names, mode=mode) if names else None
        if k is not None:
            chosen.setdefault("k", k)
        if "store_dir" in spec.options.model_fields and not chosen.get("store_dir"):
            # DocSage's tuple store lives in this workspace, one per set of knowledge bases
            chosen["store_dir"] = str(ws.root / "docsage" / "+".join(sorted(names or ["none"])))
    runner = make_method(method, lm, retriever, chosen, roles=roles)
    if gate is not None:
        from quaderno.gate.store import load_gate
        from quaderno.gate.wrapper import GatedMethod

        runner = GatedMethod(load_gate(gate) if isinstance(gate, str) else gate, runner, lm,
                             allow_other_llm=gate_allow_other_llm)
    return await runner.answer(question, trace=trace or Trace(label=question))


def ask(question: str, **kwargs: Any) -> Answer:
    """Synchronous :func:`aask`."""
    return asyncio.run(aask(question, **kwargs))
