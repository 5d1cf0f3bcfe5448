"""DocSage's options and registered names: the method and its ablations (paper Table 3)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from quaderno.methods.baselines import VanillaRAG
from quaderno.methods.spec import MethodSpec, RetrievalOptions

DOCSAGE_PAPER = "DocSage (seed 002)"


class DocSageOptions(RetrievalOptions):
    ask: Literal["active", "passive", "single", "off"] = Field(
        "active", description="schema discovery: active (ASK), passive (one refine pass), "
                              "single (one table of the question's entities, drafted once: "
                              "the srag baseline), off (a generic entity-attribute-value "
                              "table)")
    prune: bool = Field(False, description="drop columns the question's requirements, keys "
                                           "and constraints do not use (spec §1 minimality; "
                                           "off: a small model's requirement lists miss "
                                           "columns)")
    clear: bool = Field(True, description="CLEAR's confidence (Level A) and constraint checks "
                                          "(Level B)")
    logic_check: bool = Field(True, description="CLEAR's Level B, the constraint checks as "
                                                "SQL (off with clear on: the paper's 'w/o "
                                                "CLEAR (Logic Checking)')")
    correction: bool = Field(True, description="re-extract flagged values and settle "
                                               "conflicts (committee, backtracking retrieval)")
    reasoning: Literal["sql", "tables"] = Field(
        "sql", description="sql: one checked SELECT in a sandbox; tables: the LLM reads the "
                           "tables")
    pool_k: int = Field(60, ge=1, description="chunks retrieved for the question (ASK's sample "
                                              "and probe sets come from them)")
    max_chunks: int = Field(48, ge=1, description="most chunks extracted from per question")
    fill_chunks: int = Field(16, ge=0, description="most chunks read beyond max_chunks to "
                                                   "fill cells the question needs that are "
                                                   "still empty, one search per entity (0: "
                                                   "off)")
    sample_k: int = Field(8, ge=1, description="top chunks in the initial schema's sample")
    probe_size: int = Field(24, ge=1, description="chunks in ASK's trial extraction")
    probe_docs: int = Field(8, ge=1, description="least documents the probe set covers")
    max_iters: int = Field(3, ge=1, description="most ASK rounds")
    max_questions: int = Field(5, ge=1, description="most clarification questions per round")
    call_budget: int = Field(25, ge=1, description="most LLM calls for schema discovery, "
                             "repair re-asks included")
    sql_repairs: int = Field(1, ge=0, description="re-asks after a refused or failed query")
    sql_timeout_s: float = Field(5.0, gt=0, description="time limit of one query")
    confidence: Literal["auto", "logprobs", "samples", "none"] = Field(
        "auto", description="value confidence: token log-probabilities, agreement across "
                            "samples, or auto (log-probabilities when the server sends them)")
    samples: int = Field(3, ge=2, le=9, description="samples for agreement and the committee")
    vote: Literal["committee", "first-read-breaks-ties", "with-first-read",
                  "keep-first-read"] = Field(
        "first-read-breaks-ties",
        description="the committee's rule per flagged cell: committee (the paper's: the "
                    "samples' strict majority, else NULL), first-read-breaks-ties (the same, "
                    "and a tie the row's read at the vote is part of keeps that read), "
                    "with-first-read (that read is one more ballot), keep-first-read (the "
                    "same, and without a majority that read stays); "
                    "benchmarks/docsage_committee.py compares them")
    store: bool = Field(True, description="keep extracted tuples per chunk and table "
                                          "definition, so later questions re-use them")
    offer_known: bool = Field(True, description="offer schema discovery the tables earlier "
                                                "questions filled in the tuple store, so a "
                                                "question re-uses them (off: each draft "
                                                "reads the documents alone, and a run does "
                                                "not depend on which ran before it, as an "
                                                "ablation grid needs)")
    store_dir: str | None = Field(None, description="tuple store folder [default: "
                                                    "$QUADERNO_HOME/docsage/<kbs>]")
    calibration: str | None = Field(None, description="a conformal calibration JSON for Level "
                                                      "A's threshold [default: uncalibrated]")
    concurrency: int = Field(2, ge=1, description="chunks extracted at once")


def _docsage(lm, r, o, extractor, committee):  # noqa: ANN001, ANN202 - a factory
    from quaderno.methods.docsage.method import DocSage
    return DocSage(lm, r, extractor=extractor, committee=committee if committee is not lm
                   else None, **o.model_dump())


def _no_extraction(lm, r, o):  # noqa: ANN001, ANN202 - a factory
    method = VanillaRAG(lm, r, k=o.k)
    method.name = "docsage-no-extraction"
    return method


ROLES = ("extractor", "committee")
SPECS = (
    MethodSpec("docsage", _docsage, DocSageOptions, True, DOCSAGE_PAPER,
               "discover a schema for the question (ASK), extract checked tables (CLEAR), "
               "answer with one sandboxed SQL query citing source chunks", roles=ROLES),
    MethodSpec("docsage-generic-schema", _docsage, DocSageOptions, True,
               DOCSAGE_PAPER + ", Table 3", "ablation: w/o schema discovery (one generic "
               "entity-attribute-value table)", defaults={"ask": "off"}, roles=ROLES),
    MethodSpec("docsage-passive", _docsage, DocSageOptions, True, DOCSAGE_PAPER + ", Table 3",
               "ablation: passive schema discovery (initial schema, one refine pass)",
               defaults={"ask": "passive"}, roles=ROLES),
    MethodSpec("docsage-no-logic-check", _docsage, DocSageOptions, True,
               DOCSAGE_PAPER + ", Table 3", "ablation: w/o CLEAR (Logic Checking) as the paper "
               "defines it: value confidence and its committee kept, no constraint checks",
               defaults={"logic_check": False}, roles=ROLES),
    MethodSpec("docsage-no-clear", _docsage, DocSageOptions, True, DOCSAGE_PAPER + ", Table 3",
               "ablation: w/o CLEAR entirely (no confidence, no constraint checks, no "
               "correction); stronger than the paper's row", defaults={"clear": False},
               roles=ROLES),
    MethodSpec("docsage-no-sql", _docsage, DocSageOptions, True, DOCSAGE_PAPER + ", Table 3",
               "ablation: w/o SQL reasoning (the tables in the context, the LLM answers)",
               defaults={"reasoning": "tables"}, roles=ROLES),
    MethodSpec("srag", _docsage, DocSageOptions, True,
               "SRAG (Lin et al., 2025)-style, spec 002 §7", "baseline: one table of the "
               "question's entities drafted from the question and a sample, extracted without "
               "CLEAR, one sandboxed SQL query (SRAG's table QA; its SPARQL retrieval over "
               "Wikidata is the knowledge base's retriever here)",
               defaults={"ask": "single", "clear": False}, roles=ROLES),
    MethodSpec("docsage-no-extraction", _no_extraction,
               RetrievalOptions, True, DOCSAGE_PAPER + ", Table 3",
               "ablation: w/o extraction (= vanilla RAG: top-k chunks in the context)"),
)
