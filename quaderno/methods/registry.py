"""Every method quaderno ships, as typed specs: the one place `ask`, `eval`, the CLI and
the server look methods up. A new method registers here with its options model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.methods.base import Method
from quaderno.methods.baselines import IRCoT, IterRetGen, VanillaLLM, VanillaRAG
from quaderno.methods.docsage.spec import SPECS as DOCSAGE_SPECS
from quaderno.methods.misknow import MisknowRAG, StdRAG
from quaderno.methods.deepnote import DeepNote
from quaderno.methods.pager import Pager
from quaderno.methods.rat import RAT
from quaderno.methods.structrag import Route, StructRAG
from quaderno.methods.searcho1 import SearchO1
from quaderno.methods.spec import (MethodOptions, MethodRegistry, MethodSpec, RetrievalOptions,
                                   parse_opts)

PAGER_PAPER = "PAGER (seed 000)"


class PagerOptions(RetrievalOptions):
    max_iters: int = Field(10, ge=1, description="most slot fills (no-outline: summarize rounds)")
    max_sections: int = Field(8, ge=1, description="most sections kept from the outline")
    fill_mode: Literal["rewrite", "section"] = Field(
        "rewrite", description="rewrite: the LLM returns the whole page (paper); section: only "
                               "the slot's text")
    fill_retries: int = Field(1, ge=0, description="retries of a slot whose fill failed, then "
                                                   "the retrieved text fills it (the official "
                                                   "loop retries until max_iters)")
    answer_step: Literal["quaderno", "official"] = Field(
        "quaderno", description="quaderno: the answer as a span, re-asked once without a tag; "
                                "official: the paper's answer instruction, no tag = no answer "
                                "(set by --profile paper)")


class PagerAblationOptions(RetrievalOptions):
    max_iters: int = Field(10, ge=1, description="most slot fills (no-outline: summarize rounds)")
    max_sections: int = Field(8, ge=1, description="most sections kept from the outline")
    answer_step: Literal["quaderno", "official"] = Field(
        "quaderno", description="quaderno: the answer as a span, re-asked once without a tag; "
                                "official: the paper's answer instruction, no tag = no answer "
                                "(set by --profile paper)")


class NotesOptions(RetrievalOptions):
    max_iters: int = Field(10, ge=1, description="most summarize rounds")
    answer_step: Literal["quaderno", "official"] = Field(
        "quaderno", description="quaderno: the answer as a span, re-asked once without a tag; "
                                "official: the paper's answer instruction, no tag = no answer "
                                "(set by --profile paper)")


class IRCoTOptions(RetrievalOptions):
    max_steps: int = Field(5, ge=1, description="most reasoning sentences")
    max_docs: int = Field(15, ge=1, description="most documents shown to the reasoner")


class DeepNoteOptions(RetrievalOptions):
    max_steps: int = Field(3, ge=0, description="most note-refining steps (official: 3)")
    max_fail_steps: int = Field(2, ge=1, description="stop after this many refinements judged "
                                                     "not better (official: 2)")
    max_docs: int = Field(15, ge=1, description="most distinct documents read (official: 15)")


class RATOptions(RetrievalOptions):
    max_paragraphs: int = Field(4, ge=2, description="the draft is split into fewer than this "
                                                     "many paragraphs (official: 4)")
    revise_docs: int = Field(2, ge=1, description="revisions per paragraph, one per retrieved "
                                                  "document (official: 2)")


class StructRAGOptions(RetrievalOptions):
    route: Route = Field("auto", description="the structure: auto (the router chooses, "
                                             "official) or one fixed")
    max_subqueries: int = Field(6, ge=1, description="most sub-questions used (official: "
                                                     "unbounded)")


class SearchO1Options(RetrievalOptions):
    k: int = Field(10, ge=1, description="documents per search (official: 10)")
    max_searches: int = Field(10, ge=1, description="most searches (official, multi-hop: 10)")
    max_turns: int = Field(15, ge=1, description="most reasoning turns (official: 15)")


class IterRetGenOptions(RetrievalOptions):
    iterations: int = Field(3, ge=1, description="retrieval-generation rounds")


class MisknowOptions(RetrievalOptions):
    k: int = Field(4, ge=2, multiple_of=2, description="K: K/2 chunks per round (paper: 4)")
    kb1: str | None = Field(None, description="knowledge base of round 1 (the question) "
                                              "[default: every --kb]")
    kb2: str | None = Field(None, description="knowledge base of round 2 (the missing-knowledge "
                                              "queries) [default: every --kb]")
    reasoning: bool = Field(True, description="give the reader the reasoner's reasoning "
                                              "(false: the Table 5 'w/o reasoning' ablation)")
    thought_line: bool = Field(True, description="give the reader the judgment's thought "
                                                 "(REC A11)")
    backfill: bool = Field(True, description="refill round 2 from deeper ranks when MD5 dedup "
                                             "drops chunks, so |C| = K (REC A7)")
    budget_parity: bool = Field(False, description="when round 2 is skipped, fill it with the "
                                                   "question's next hits from kb2 (REC A8)")
    reasoning_max_words: int = Field(1536, ge=1, description="reasoning shown to the reader, "
                                                             "cut from the middle (REC A10)")
    reader_max_tokens: int = Field(64, ge=1, description="reader answer length (REC A14: 64 "
                                                         "for NQ, 512 for long answers)")
    reasoner_max_tokens: int = Field(1024, ge=1, description="reasoner reply length (a "
                                                             "reasoning model's thinking "
                                                             "counts too: raise it for R1)")


class StdRAGOptions(RetrievalOptions):
    k: int = Field(4, ge=1, description="documents retrieved (paper: 4)")
    kbs: list[str] = Field(default_factory=list, description="knowledge bases to take K/n each "
                                                             "from (2-way: two) [default: the "
                                                             "--kb retriever as it is]")
    reader_max_tokens: int = Field(64, ge=1, description="reader answer length")


MISKNOW_PAPER = "Missing-knowledge RAG (seed 001)"


def _misknow(lm, r, o, reasoner):  # noqa: ANN001, ANN202 - a factory
    return MisknowRAG(lm, r, reasoner=reasoner, **o.model_dump())


def _pager(variant: str):  # noqa: ANN202 - a factory
    return lambda lm, r, o: Pager(lm, r, variant=variant, **o.model_dump())


SPECS = (
    MethodSpec("pager", _pager("iterative"), PagerOptions, True, PAGER_PAPER,
               "outline a page, fill each slot with its own sub-query and retrieval, answer "
               "from the page"),
    MethodSpec("pager-section", _pager("iterative"), PagerOptions, True, PAGER_PAPER,
               "PAGER with section fill: the LLM writes only the slot's text",
               defaults={"fill_mode": "section"}),
    MethodSpec("pager-parallel", _pager("parallel"), PagerAblationOptions, True,
               PAGER_PAPER + ", Table 2",
               "ablation: sub-queries for all slots at once, one retrieval each, every slot "
               "filled from all their documents"),
    MethodSpec("pager-no-iter", _pager("no_iter_retrieval"), PagerOptions, True,
               PAGER_PAPER + ", Table 2",
               "ablation: one retrieval with the question, then every slot filled from it"),
    MethodSpec("pager-no-outline", _pager("no_outline"), NotesOptions, True,
               PAGER_PAPER + ", Table 2",
               "ablation: no page; summarize retrieved documents into notes until sufficient"),
    MethodSpec("vanilla-llm", lambda lm, r, o: VanillaLLM(lm), MethodOptions, False,
               "baseline", "the question alone, no retrieval"),
    MethodSpec("vanilla-rag", lambda lm, r, o: VanillaRAG(lm, r, **o.model_dump()),
               RetrievalOptions, True, "baseline", "top-k documents of the question in context"),
    MethodSpec("ircot", lambda lm, r, o: IRCoT(lm, r, **o.model_dump()), IRCoTOptions, True,
               "IRCoT (Trivedi et al., 2023)",
               "each chain-of-thought sentence is the next query, until \"the answer is\""),
    MethodSpec("iter-retgen", lambda lm, r, o: IterRetGen(lm, r, **o.model_dump()),
               IterRetGenOptions, True, "Iter-RetGen (Shao et al., 2023)",
               "retrieve with the question and the previous generation, regenerate"),
    MethodSpec("deepnote", lambda lm, r, o: DeepNote(lm, r, **o.model_dump()), DeepNoteOptions,
               True, "DeepNote (Wang et al., 2024), PAGER Table 1",
               "a note from the first documents, refined with new queries' documents only when "
               "the model judges the refined note better"),
    MethodSpec("rat", lambda lm, r, o: RAT(lm, r, **o.model_dump()), RATOptions, True,
               "RAT (Wang et al., 2024), PAGER Table 1",
               "a zero-shot chain of thought split into paragraphs, each revised with the "
               "documents of a query written from the answer so far"),
    MethodSpec("structrag", lambda lm, r, o: StructRAG(lm, r, **o.model_dump()),
               StructRAGOptions, True, "StructRAG (Li et al., 2025), PAGER Table 1",
               "a router picks a structure (table, graph, chunks); each retrieved document is "
               "rebuilt as it; the question decomposed, the structure filtered per "
               "sub-question, merged"),
    MethodSpec("search-o1", lambda lm, r, o: SearchO1(lm, r, **o.model_dump()), SearchO1Options,
               True, "Search-o1 (Li et al., 2025), PAGER Table 1",
               "reasoning that writes search queries mid-thought; each search's documents "
               "distilled by a Reason-in-Documents step; the answer in \\boxed{}",
               model_decides_retrieval=True),
    MethodSpec("misknow", _misknow, MisknowOptions, True, MISKNOW_PAPER,
               "round 1 from kb1; a reasoner judges what knowledge is missing and writes "
               "queries; round 2 from kb2 with them; answer with the reasoning",
               roles=("reasoner",)),
    MethodSpec("misknow-no-reasoning", _misknow, MisknowOptions, True,
               MISKNOW_PAPER + ", Table 5",
               "ablation: misknow without the reasoning line in the final prompt",
               defaults={"reasoning": False}, roles=("reasoner",)),
    MethodSpec("std-rag", lambda lm, r, o: StdRAG(lm, r, **o.model_dump()), StdRAGOptions, True,
               MISKNOW_PAPER + ", baseline",
               "top-K once (2-way: K/2 from each of two KBs), the first-round reader prompt"),
    *DOCSAGE_SPECS,
)

METHODS = MethodRegistry(SPECS)


def get_spec(name: str) -> MethodSpec:
    """The spec of method ``name``; ConfigError listing the methods when unknown."""
    return METHODS.spec(name)


def make_method(name: str, lm: LM, retriever: Retriever | None,
                options: Mapping[str, Any] | MethodOptions | None = None, *,
                roles: Mapping[str, LM] | None = None, **kw: Any) -> Method:
    """Build method ``name`` with ``options`` (and keyword options), validated by its spec:
    an unknown or ill-typed option is a ConfigError naming it and the allowed ones.
    ``roles`` gives LMs for the method's extra roles (``{"reasoner": lm2}``)."""
    merged = {**(options.model_dump() if isinstance(options, MethodOptions)
                 else dict(options or {})), **kw}
    return METHODS.make(name, lm, retriever, merged, roles=roles)


__all__ = ["METHODS", "SPECS", "get_spec", "make_method", "parse_opts"]
