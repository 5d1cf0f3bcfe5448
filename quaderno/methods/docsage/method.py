"""DocSage (seed 002) as a quaderno method, and its ablations (paper Tables 3–4).

One question:

1. **gather**: the question's top chunks (``pool_k``) give ASK its sample (top 8 plus four
   chunks of other documents) and probe set (24 chunks from at least 8 documents);
2. **schema** (``ask``): ``active`` is ASK (:mod:`.ask`), ``passive`` the initial schema
   plus one refine pass, ``single`` one table of the question's entities (with ``clear``
   off, the SRAG-style baseline ``srag``), ``off`` the generic entity-attribute-value
   schema;
3. **extract** (``clear``): the extraction scope is the question's chunks plus each table's
   and entity type's, up to ``max_chunks``, then up to ``fill_chunks`` found by one search
   per entity whose cells the question needs are empty (:mod:`.complete`), a document per
   entity and round, up to three rounds while cells stay empty (a document read as no row
   of a table its entity misses cells of is read again for that table alone:
   :func:`.extract.extract`); CLEAR extracts
   through the tuple store (paid once per chunk and table definition), flags low-confidence
   values (Level A), checks the constraints (Level B) and corrects; ``clear=false`` keeps
   extraction and alias merging only ("w/o CLEAR");
4. **reason** (``reasoning``): ``sql`` compiles one DuckDB SELECT, checks and runs it in the
   sandbox, traces the result rows to their chunks and answers from the result; ``tables``
   puts the tables in the context instead ("w/o SQL reasoning").

"w/o extraction" is vanilla RAG over the same retriever (registered as
``docsage-no-extraction``). The answer cites the chunks behind the rows it used.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, get_args

from quaderno.corpus.chunk import Chunk
from quaderno.index.hits import Hit
from quaderno.index.retrievers import Retriever, kb_names
from quaderno.llm.lm import LM
from quaderno.methods.answer import Answer
from quaderno.methods.base import BaseMethod
from quaderno.methods.details import DocSageDetails
from quaderno.methods.docsage.ask import SchemaDiscovery
from quaderno.methods.docsage.clear import ClearConfig, episode_retriever, run_clear
from quaderno.methods.docsage.committee import VoteRule
from quaderno.methods.docsage.complete import completion, named_groups, rosters
from quaderno.methods.docsage.confidence import Calibration
from quaderno.methods.docsage.detect import detect_all
from quaderno.methods.docsage.extract import (ChunkResult, ExtractionSettings, all_rows,
                                              extract)
from quaderno.methods.docsage.gather import extraction_scope, probe_set, sample_set
from quaderno.methods.docsage.offer import relevant_tables
from quaderno.methods.docsage.reason import (SQLReasoner, answer_from_tables, finds_nothing,
                                             render_tables)
from quaderno.methods.docsage.records import AskLog
from quaderno.methods.docsage.rows import Row, row_chunks
from quaderno.methods.docsage.schema import Schema, generic_schema
from quaderno.methods.docsage.scoped_ids import scope_invented_keys
from quaderno.methods.docsage.signals import Signal
from quaderno.methods.docsage.stated import stated_values, with_stated
from quaderno.methods.docsage.store import TupleStore
from quaderno.methods.docsage.synthesis import NOT_FOUND, numbered
from quaderno.methods.episode import Episode
from quaderno.storage import check_name

log = logging.getLogger(__name__)

# searches for the cells the question needs: one document per entity and round
_COMPLETION_ROUNDS = 3


def default_store_dir(retriever: Retriever | None) -> Path:
    """``$QUADERNO_HOME/docsage/<knowledge bases>``: one tuple store per collection."""
    from quaderno.workspace import default_home
    names = sorted(n for n in kb_names(retriever) if n) if retriever is not None else []
    return default_home() / "docsage" / check_name("+".join(names) or "default", "store name")


class DocSage(BaseMethod):
    name = "docsage"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5,
                 ask: Literal["active", "passive", "single", "off"] = "active",
                 clear: bool = True,
                 logic_check: bool = True, correction: bool = True,
                 reasoning: Literal["sql", "tables"] = "sql", prune: bool = False,
                 pool_k: int = 60, max_chunks: int = 48, fill_chunks: int = 16,
                 sample_k: int = 8,
                 probe_size: int = 24, probe_docs: int = 8, max_iters: int = 3,
                 max_questions: int = 5, call_budget: int = 25, sql_repairs: int = 1,
                 sql_timeout_s: float = 5.0, confidence: str = "auto",
                 samples: int = 3, vote: str = "first-read-breaks-ties", store: bool = True,
                 offer_known: bool = True, store_dir: str | None = None,
                 calibration: str | None = None, committee: LM | None = None,
                 extractor: LM | None = None, concurrency: int = 2) -> None:
        super().__init__(lm, retriever)
        if ask not in ("active", "passive", "single", "off"):
            raise ValueError(f"ask must be active, passive, single or off, got {ask!r}")
        if reasoning not in ("sql", "tables"):
            raise ValueError(f"reasoning must be sql or tables, got {reasoning!r}")
        self.k, self.ask_mode, self.reasoning, self.prune = k, ask, reasoning, prune
        if fill_chunks < 0:
            raise ValueError(f"fill_chunks must be 0 or more, got {fill_chunks}")
        self.pool_k, self.max_chunks, self.sample_k = pool_k, max_chunks, sample_k
        self.fill_chunks = fill_chunks
        self.probe_size, self.probe_docs = probe_size, probe_docs
        self.discovery = (SchemaDiscovery(mode=ask, max_iters=max_iters,
                                          max_questions=max_questions, call_budget=call_budget,
                                          k=k) if ask != "off" else None)
        if vote not in get_args(VoteRule):
            raise ValueError(f"vote must be one of {', '.join(get_args(VoteRule))}, "
                             f"got {vote!r}")
        self.clear_config = ClearConfig(level_a=clear, level_b=clear and logic_check,
                                        correction=correction, concurrency=concurrency,
                                        vote=vote)
        # the same settings with CLEAR off: the ablation changes only what is done with the
        # values (and the variants share the tuple store)
        self.settings = ExtractionSettings(confidence=confidence,
                                           samples=samples)
        self.reasoner = SQLReasoner(repairs=sql_repairs, timeout_s=sql_timeout_s)
        self.committee, self.extractor = committee, extractor or lm
        self.store = (TupleStore(Path(store_dir) if store_dir else default_store_dir(retriever))
                      if store else None)
        self.calibration = Calibration.load(Path(calibration)) if calibration else None
        self.offer_known = offer_known
        # the registered name of this combination of switches (docsage-passive, ...)
        parts = [{"off": "-generic-schema", "passive": "-passive", "single": "-single-table",
                  "active": ""}[ask],
                 "-no-clear" if not clear else "" if logic_check else "-no-logic-check",
                 "-no-sql" if reasoning == "tables" else ""]
        self.name = "docsage" + "".join(parts)
        if self.name == "docsage-single-table-no-clear":
            self.name = "srag"          # one table, no CLEAR: the baseline's own name

    # -- stages ---------------------------------------------------------------------------
    async def _trial(self, ep: Episode, schema: Schema, probe: Sequence[Hit],
                     fresh: list[int]) -> list[Row]:
        """ASK's trial extraction on the probe set (through the store, so the final
        extraction re-uses it for every table that did not change); ``fresh`` is appended
        with the tuples its calls read."""
        results = await extract(self.extractor, [h.chunk for h in probe], schema,
                                self.settings, store=self.store, trace=ep.trace,
                                concurrency=self.clear_config.concurrency)
        fresh.append(sum(r.fresh for r in results))
        return all_rows(results)

    async def _schema(self, ep: Episode, ranked: Sequence[Hit],
                      fresh: list[int]) -> tuple[Schema, AskLog]:
        if self.discovery is None:
            return generic_schema(), AskLog(mode="generic", stop_reason="generic schema")
        sample = sample_set(ranked, top=self.sample_k)
        probe = probe_set(ranked, size=self.probe_size, min_docs=self.probe_docs)
        known = relevant_tables([t for t, _ in self.store.known_tables(filled=True)],
                                ep.question) if self.store and self.offer_known else []

        async def trial(schema: Schema, hits: Sequence[Hit]) -> list[Row]:
            return await self._trial(ep, schema, hits, fresh)
        texts = {h.chunk.id: h.chunk.render() for h in probe}  # as extraction saw them

        def detect(schema: Schema, rows: Sequence[Row]) -> list[Signal]:
            return detect_all(schema, rows, texts, ep.question)
        return await self.discovery.run(ep, sample, probe, extract=trial, detect=detect,
                                        known=known)

    async def _complete(self, ep: Episode, schema: Schema,
                        chunks: list[Chunk]
                        ) -> tuple[list[Hit], list[ChunkResult], list[dict]]:
        """The chunks read beyond the scope to fill the cells the question needs
        (:mod:`.complete`), what they and the scope yielded (extracted here to find the
        empty cells, in up to :data:`_COMPLETION_ROUNDS` rounds; CLEAR takes it over, and the
        report counts it as CLEAR's), and the searches that found them."""
        if not self.fill_chunks:
            return [], [], []
        with ep.trace.span("docsage.complete", budget=self.fill_chunks) as span:
            results = await extract(self.extractor, chunks, schema, self.settings,
                                    store=self.store, trace=ep.trace,
                                    concurrency=self.clear_config.concurrency)

            async def search(query: str, k: int) -> Sequence[Hit]:
                return await ep.retrieve(query, k, cite=False)
            # the rosters of the groups the question names first, so that a member only
            # they name gets a row, and then a search for its empty cells
            searched: list[dict] = []
            listed = await rosters(search, named_groups(schema, all_rows(results), ep.question),
                                   [c.id for c in chunks], budget=self.fill_chunks // 4,
                                   searched=searched)
            if listed:
                results = [*results, *await extract(
                    self.extractor, [h.chunk for h in listed], schema, self.settings,
                    store=self.store, trace=ep.trace,
                    concurrency=self.clear_config.concurrency)]
            # then, in rounds, one more document per entity whose needed cells are still
            # empty: an entity whose first document stated them costs no second one
            read = [*(c.id for c in chunks), *(h.chunk.id for h in listed)]
            found: list[Hit] = []
            expects: dict[str, tuple[str, ...]] = {}    # chunk -> its entity's tables
            rounds = 0
            while rounds < _COMPLETION_ROUNDS and len(found) < self.fill_chunks - len(listed):
                new = await completion(search, schema, all_rows(results), ep.question,
                                       [*read, *(h.chunk.id for h in found)],
                                       budget=self.fill_chunks - len(listed) - len(found),
                                       searched=searched, expects=expects)
                if not new:
                    break
                rounds += 1
                found += new
                # each was found by a search naming its entity: a reply with no row of a
                # table the entity misses cells of reads that table alone again
                results = [*results, *await extract(
                    self.extractor, [h.chunk for h in new], schema, self.settings,
                    store=self.store, trace=ep.trace,
                    concurrency=self.clear_config.concurrency, expected=expects)]
            span.outputs = {"rosters": [h.chunk.id for h in listed],
                            "chunks": [h.chunk.id for h in found], "rounds": rounds,
                            "searches": searched}
        return [*listed, *found], results, searched

    def _cite(self, ep: Episode, by_chunk: dict[str, Hit], chunk_ids: Sequence[str]) -> None:
        hits = [by_chunk[c] for c in dict.fromkeys(chunk_ids) if c in by_chunk]
        ep.cite(hits, ep.question)

    async def run(self, ep: Episode) -> Answer:
        with ep.trace.span("docsage.gather", k=self.pool_k) as span:
            ranked = await ep.retrieve(ep.question, self.pool_k, cite=False)
            span.outputs = {"chunks": len(ranked)}
        trial_fresh: list[int] = []     # tuples each ASK trial's calls read
        schema, ask_log = await self._schema(ep, ranked, trial_fresh)
        if self.prune:
            pruned = schema.pruned()
            dropped = sum(len(t.columns) for t in schema.tables) - sum(
                len(t.columns) for t in pruned.tables)
            if dropped:
                ep.trace.fallback(f"pruned {dropped} column(s) the question does not need")
            schema = pruned
        scope, cut = await extraction_scope(ep, schema, ranked, max_chunks=self.max_chunks,
                                            per_query=self.k * 4)
        if cut:
            ep.trace.fallback(f"more chunks matched than max_chunks={self.max_chunks}; "
                              "extracted from the best-ranked ones")
        filled, extracted, searched = await self._complete(ep, schema,
                                                           [h.chunk for h in scope])
        scope = [*scope, *filled]
        by_chunk = {h.chunk.id: h for h in scope} | {h.chunk.id: h for h in ranked}
        chunks: list[Chunk] = [h.chunk for h in scope]
        backtrack = episode_retriever(ep)

        async def retrieve(query: str, k: int) -> Sequence[Hit]:
            # what backtracking finds can settle a cell: its chunk must be citable
            hits = await backtrack(query, k)
            by_chunk.update({h.chunk.id: h for h in hits if h.chunk.id not in by_chunk})
            return hits
        clear = await run_clear(self.extractor, schema, chunks, config=self.clear_config,
                                settings=self.settings, store=self.store,
                                calibration=self.calibration, retrieve=retrieve,
                                committee=self.committee, trace=ep.trace,
                                extracted=extracted, question=ep.question)
        # a number each chunk's extraction gave its own rows pairs unrelated rows of
        # different chunks in a join: numbered per chunk (scoped_ids.py)
        rows, scoped = scope_invented_keys(schema, clear.rows,
                                           {c: h.chunk.render() for c, h in by_chunk.items()})
        for note in scoped:
            ep.trace.fallback(f"invented key numbered per chunk: {note}")
        by_table: dict[str, list[dict]] = {t.name: [] for t in schema.tables}
        for r in rows:
            if r.table in by_table:
                by_table[r.table].append(r.values)
        details = DocSageDetails(variant=self.variant, db_schema=schema, ask=ask_log,
                                 chunks_read=len(chunks), scope_cut=cut,
                                 completed=[h.chunk.id for h in filled],
                                 completion_searches=searched,
                                 clear=clear.report.model_dump(mode="json"),
                                 tuples_new=sum(trial_fresh) + clear.report.tuples_new,
                                 scoped_keys=scoped,
                                 tables={name: found[:20] for name, found in by_table.items()},
                                 table_sizes={name: len(found)
                                              for name, found in by_table.items()})
        if self.reasoning == "tables":
            answer, explanation = await answer_from_tables(ep, schema, rows)
            # the chunks behind the tables shown (every cell's: a corrected or merged cell
            # came from another chunk); with empty tables, the chunks read
            self._cite(ep, by_chunk, [c for r in rows for c in row_chunks(r)]
                       or [c.id for c in chunks])
            return ep.finish(answer, explanation=explanation,
                             context=render_tables(schema, rows), details=details)
        table, attempts = await self.reasoner.run(ep, schema, rows)
        details.sql, details.result = attempts, table
        ran = next((a.sql for a in reversed(attempts) if a.stage == "ok"), "")
        if table is None or finds_nothing(table, schema, rows):
            ep.trace.fallback("no query returned a value; answered 'not found' (citing the "
                              "chunks extraction read)")
            self._cite(ep, by_chunk, [c.id for c in chunks])
            return ep.finish(NOT_FOUND, context=numbered(table, 0) if table else "",
                             details=details)
        table.stated = stated_values(table, schema, {c: h.chunk for c, h in by_chunk.items()},
                                     limit=self.reasoner.shown_rows)
        synthesis = await self.reasoner.synthesize(ep, ran, table)
        answer, explanation, cited = synthesis.answer, synthesis.explanation, synthesis.cited
        details.ungrounded, details.from_rows = synthesis.ungrounded, synthesis.from_rows
        details.from_rows_why = synthesis.why
        details.explanation_ungrounded = synthesis.explanation_ungrounded
        with ep.trace.span("docsage.stated", stated=len(table.stated)) as span:
            # a number given in figures only gets the documents' own words for it, from a
            # row the model cited (or the one row there is): never one it merely matches
            quoted = cited or ([1] if len(table.rows) == 1 else [])
            answer = with_stated(answer, table.stated, quoted)
            span.outputs = {"answer": answer}
        cited = self.reasoner.cited_or_shown(table, cited)
        details.cited_rows = cited
        self._cite(ep, by_chunk, [c for i in cited for s in table.sources[i - 1]
                                  for c in s.chunk_ids()])
        return ep.finish(answer, explanation=explanation,
                         context=numbered(table, self.reasoner.shown_rows), details=details)

    @property
    def variant(self) -> str:
        """The paper's name for this combination of switches ("w/o CLEAR", "passive schema
        discovery, w/o SQL reasoning"), "full" for none; ``srag`` is the baseline."""
        if self.name == "srag":
            return "single table (SRAG-style)"
        parts = [{"off": "w/o schema discovery", "passive": "passive schema discovery",
                  "single": "single table", "active": ""}[self.ask_mode]]
        if not self.clear_config.level_a:
            parts.append("w/o CLEAR")
        elif not self.clear_config.level_b:
            parts.append("w/o CLEAR (Logic Checking)")
        if self.reasoning == "tables":
            parts.append("w/o SQL reasoning")
        return ", ".join(p for p in parts if p) or "full"
