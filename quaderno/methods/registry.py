"""Method names → constructors: the one place `ask` and `eval` look methods up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from quaderno.errors import ConfigError
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.methods.base import Method
from quaderno.methods.baselines import IRCoT, IterRetGen, VanillaLLM, VanillaRAG
from quaderno.methods.pager import Pager

Factory = Callable[..., Method]

METHODS: dict[str, Factory] = {
    "pager": lambda lm, r, **kw: Pager(lm, r, **kw),
    "pager-section": lambda lm, r, **kw: Pager(lm, r, fill_mode="section", **kw),
    "pager-parallel": lambda lm, r, **kw: Pager(lm, r, variant="parallel", **kw),
    "pager-no-iter": lambda lm, r, **kw: Pager(lm, r, variant="no_iter_retrieval", **kw),
    "pager-no-outline": lambda lm, r, **kw: Pager(lm, r, variant="no_outline", **kw),
    "vanilla-llm": lambda lm, r, **kw: VanillaLLM(lm),
    "vanilla-rag": lambda lm, r, **kw: VanillaRAG(lm, r, **kw),
    "ircot": lambda lm, r, **kw: IRCoT(lm, r, **kw),
    "iter-retgen": lambda lm, r, **kw: IterRetGen(lm, r, **kw),
}
NEEDS_RETRIEVAL = {name for name in METHODS if name != "vanilla-llm"}


def make_method(name: str, lm: LM, retriever: Retriever | None, **options: Any) -> Method:
    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}")
    if name in NEEDS_RETRIEVAL and retriever is None:
        raise ConfigError(f"method {name!r} needs a knowledge base (--kb)")
    return METHODS[name](lm, retriever, **options)
