"""ASK: active schema discovery through knowledge-seeking queries (paper §3.1, Eq. 1–3).

Active mode, per question:

1. F_init (Eq. 1): an initial schema from the question and a sample of chunks;
2. consistency analysis: the schema is tried on a larger probe set of chunks (trial
   extraction) and code finds the three uncertainty signals (:mod:`.detect`);
3. F_ask (Eq. 2): one clarification question per signal (at most ``max_questions``, by the
   spec's priority); a signal that carries its own repair (an invented key: no document
   states it, so no document can answer for it) is repaired by code instead, and the next
   round's trial extraction reads the repaired schema before anything is asked;
4. targeted retrieval over the whole collection with each question, an answer with citations
   or UNANSWERED (A(P, D)), and F_update (Eq. 3): patches that revise, expand or prune;
5. stop when the schema's canonical hash is unchanged between two rounds, no signal remains,
   ``max_iters`` rounds ran, or the LLM-call budget is spent.

Passive mode (the ablation "w/ passive schema discovery"): F_init, then one refine pass over
a larger sample, no signals, no questions. Single mode (the SRAG-style baseline the spec
recommends, ``srag``): one table of the question's entities drafted from the question and
the sample, nothing more; a draft of several tables keeps its first, without references to
the others. Every round is logged in :class:`AskLog`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from quaderno.errors import StepError
from quaderno.index.hits import Hit
from quaderno.methods.docsage.adopt import adopt_offered
from quaderno.methods.docsage.draft import SchemaDraft, from_schema, to_schema
from quaderno.methods.docsage.joins import declare, named_references
from quaderno.methods.docsage.offer import describe_table, describe_tables
from quaderno.methods.docsage.own_key import own_keys
from quaderno.methods.docsage.patch import apply_patches
from quaderno.methods.docsage.records import AskLog, AskRound, Clarification
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table, generic_schema
from quaderno.methods.docsage.siblings import merge_siblings
from quaderno.methods.docsage.signals import Signal, rank
from quaderno.methods.docsage.single_numbers import single_numbers
from quaderno.methods.docsage.single_table import one_table
from quaderno.methods.docsage.steps import (ANSWER_CLARIFICATION, CLARIFY, INIT_SCHEMA,
                                            REFINE_SCHEMA, SINGLE_TABLE, UPDATE_SCHEMA,
                                            fenced)
from quaderno.methods.docsage.whole_names import whole_names
from quaderno.methods.episode import Episode, format_docs

ASK_STEPS = ("docsage.schema", "docsage.ask")  # step-name prefixes of ASK's own calls
TrialExtract = Callable[[Schema, Sequence[Hit]], Awaitable[list[Row]]]
Detector = Callable[[Schema, Sequence[Row]], list[Signal]]


def _drafted(draft: SchemaDraft, version: int = 0, question: str = "",
             texts: Sequence[str] = ()) -> tuple[Schema, list[str]]:
    """The model's draft as a schema, with a note on every repair. First a person's split
    name is made one column (:func:`.whole_names.whole_names`), and tables named after one
    entity each, a proper name in ``texts`` (the documents the model read), are merged into
    one table, their kind's or the container's the ``question`` names
    (:func:`.siblings.merge_siblings`); a number marked multi-valued in a table that says
    nothing of when is one value (:func:`.single_numbers.single_numbers`)."""
    draft, merged = whole_names(draft)
    draft, joined = merge_siblings(draft, question, texts)
    draft, numbers = single_numbers(draft)
    schema, notes = to_schema(draft, version=version)
    return schema, merged + joined + numbers + notes


def _texts(hits: Sequence[Hit]) -> list[str]:
    return [h.chunk.render() for h in hits]


def _draft_json(schema: Schema) -> str:
    return json.dumps(from_schema(schema).model_dump(exclude_defaults=True), indent=1)


def _problems(signals: Sequence[Signal]) -> str:
    lines = []
    for i, s in enumerate(signals, start=1):
        where = f"{s.table}.{s.column}" if s.column else s.table
        vals = f" (values: {', '.join(map(str, s.values[:6]))})" if s.values else ""
        at = f" at {where}" if where else ""
        lines.append(f"{i}. {s.kind.replace('_', ' ')}{at}: {s.detail}{vals}")
    return "\n".join(lines)


def _declare_references(ep: Episode, schema: Schema, log: AskLog) -> Schema:
    """The schema with every foreign key its column names imply declared
    (:func:`.joins.named_references`): the SQL prompt then shows the join, and the gate can
    add it. Recorded in ``log.declared`` and the trace."""
    patches = named_references(schema)
    if not patches:
        return schema
    try:
        new = declare(schema, patches, "ask: references the names imply")
    except ValueError as exc:
        ep.trace.fallback(f"the references the column names imply were not declared: {exc}")
        return schema
    log.declared = [f"{p.table}.{p.column} -> {p.references_table}.{p.references_column}"
                    for p in patches]
    ep.trace.fallback("foreign keys the column names imply, declared: "
                      + "; ".join(log.declared))
    return new


def _repairs(left: int, *, after: int) -> int:
    """Repair re-asks a call may make when ``left`` calls of the budget remain and ``after``
    more must follow it: one when a second call still leaves them room, else none."""
    return 1 if left - 1 - after >= 1 else 0


class SchemaDiscovery:
    """Runs F_init and the ASK loop (or the passive refine) inside an episode."""

    def __init__(self, *, mode: Literal["active", "passive", "single"] = "active",
                 max_iters: int = 3, max_questions: int = 5, call_budget: int = 25,
                 k: int = 5) -> None:
        if mode not in ("active", "passive", "single"):
            raise ValueError(f"mode must be 'active', 'passive' or 'single', got {mode!r}")
        for name, value in (("max_iters", max_iters), ("max_questions", max_questions),
                            ("call_budget", call_budget), ("k", k)):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        self.mode, self.max_iters, self.max_questions = mode, max_iters, max_questions
        self.call_budget, self.k = call_budget, k

    async def initial(self, ep: Episode, sample: Sequence[Hit],
                      known: Sequence[Table] = ()) -> tuple[Schema, list[str]]:
        """F_init (Eq. 1), or in single mode the one table. A reply that yields no table is
        a StepError."""
        if self.mode == "single":
            step = SINGLE_TABLE
            result = await step.run(ep.lm, trace=ep.trace, question=ep.question,
                                    documents=fenced(format_docs(sample)),
                                    repairs=_repairs(self.call_budget, after=0))
        else:
            step = INIT_SCHEMA
            result = await step.run(ep.lm, trace=ep.trace, question=ep.question,
                                    known_tables=describe_tables(known),
                                    documents=fenced(format_docs(sample)),
                                    repairs=_repairs(self.call_budget, after=0))
        try:
            schema, notes = _drafted(result.value, question=ep.question, texts=_texts(sample))
        except ValueError as exc:
            raise StepError(step.name, f"the schema draft is unusable: {exc}",
                            raw=result.raw) from None
        if self.mode == "single" and len(schema.tables) > 1:
            schema, note = one_table(schema)
            notes.append(note)
        if known:
            schema, adopted = adopt_offered(schema, known)
            notes.extend(adopted)
        return schema, notes

    async def run(self, ep: Episode, sample: Sequence[Hit], probe: Sequence[Hit], *,
                  extract: TrialExtract, detect: Detector,
                  known: Sequence[Table] = ()) -> tuple[Schema, AskLog]:
        start_calls = len(ep.trace.calls)
        known = () if self.mode == "single" else known   # its prompt offers none
        log = AskLog(mode=self.mode, offered=[describe_table(t) for t in known])

        def own_calls() -> int:
            """ASK's own LLM calls (trial extraction is CLEAR's, counted there)."""
            return sum(1 for c in ep.trace.calls[start_calls:]
                       if (c.step or "").startswith(ASK_STEPS))
        with ep.trace.span("docsage.ask", mode=self.mode, sample=len(sample),
                           probe=len(probe), offered=log.offered) as span:
            try:
                schema, log.initial_notes = await self.initial(ep, sample, known)
            except StepError as exc:
                ep.trace.fallback(f"the initial schema could not be read ({exc}); continuing "
                                  "with the generic schema", span)
                log.mode, log.stop_reason = "generic", "initial schema unreadable"
                log.llm_calls = own_calls()
                return generic_schema(), log
            for note in log.initial_notes:
                ep.trace.fallback(f"schema draft repaired: {note}")
            if self.mode == "passive":
                schema = await self._refine(ep, schema, probe, log,
                                            self.call_budget - own_calls())
                log.stop_reason = "passive: one refine pass"
            elif self.mode == "single":
                log.stop_reason = "single table: no discovery"
            else:
                schema = await self._loop(ep, schema, probe, extract, detect, log, own_calls)
            if known:   # a refine or update may have rewritten a table from the stored one
                schema, adopted = adopt_offered(schema, known)
                for note in adopted:
                    ep.trace.fallback(f"schema repaired: {note}")
            schema = _declare_references(ep, schema, log)
            schema, keyed = own_keys(schema)
            log.keyed = keyed
            for note in keyed:
                ep.trace.fallback(f"schema repaired: {note}")
            log.llm_calls = own_calls()
            span.outputs = {"tables": [t.name for t in schema.tables], "version": schema.version,
                            "rounds": len(log.rounds), "stop": log.stop_reason}
        return schema, log

    async def _refine(self, ep: Episode, schema: Schema, probe: Sequence[Hit],
                      log: AskLog, left: int) -> Schema:
        """The passive ablation's one refine pass, when ``left`` calls of the budget remain."""
        if left < 1:
            ep.trace.fallback(f"passive refine not asked: ASK's call budget of "
                              f"{self.call_budget} is spent; kept the initial schema")
            return schema
        try:
            result = await REFINE_SCHEMA.run(ep.lm, trace=ep.trace, question=ep.question,
                                             schema=_draft_json(schema),
                                             documents=fenced(format_docs(probe)),
                                             repairs=_repairs(left, after=0))
            new, notes = _drafted(result.value, version=schema.version + 1,
                                  question=ep.question, texts=_texts(probe))
        except (StepError, ValueError) as exc:
            ep.trace.fallback(f"passive refine failed ({exc}); kept the initial schema")
            return schema
        log.rounds.append(AskRound(iteration=1, notes=notes, schema_hash=new.canonical_hash()))
        return new.model_copy(update={"history": [*schema.history,
                                                  {"version": new.version,
                                                   "reason": "passive refine"}]})

    async def _loop(self, ep: Episode, schema: Schema, probe: Sequence[Hit],
                    extract: TrialExtract, detect: Detector, log: AskLog,
                    own_calls: Callable[[], int]) -> Schema:
        def left() -> int:
            return self.call_budget - own_calls()
        for iteration in range(1, self.max_iters + 1):
            if own_calls() >= self.call_budget:
                log.stop_reason = f"LLM-call budget of {self.call_budget} spent"
                return schema
            with ep.trace.span("docsage.ask.round", iteration=iteration) as span:
                round_ = AskRound(iteration=iteration, schema_hash=schema.canonical_hash())
                log.rounds.append(round_)
                rows = await extract(schema, probe)
                round_.trial_rows = len(rows)
                found = rank(detect(schema, rows), self.max_questions)
                round_.repairs = [s for s in found if s.fix is not None]
                round_.signals = [s for s in found if s.fix is None]
                span.outputs = {"signals": [s.kind for s in round_.signals],
                                "repairs": len(round_.repairs)}
                if not found:
                    log.stop_reason = "no uncertainty signal"
                    return schema
                # signals code can repair are repaired, and the next round's trial reads
                # the repaired schema before anything is asked; else the others are asked
                new = self._fix(ep, schema, round_)
                if new is schema:
                    if not round_.signals:
                        log.stop_reason = "no signal could be repaired or asked"
                        return schema
                    # the budget holds: one call for the questions, one per answer and one
                    # for the update (a malformed reply's retry aside)
                    room = self.call_budget - own_calls() - 2
                    if room < 1:
                        log.stop_reason = f"LLM-call budget of {self.call_budget} spent"
                        return schema
                    asked = round_.signals[:room]
                    if len(asked) < len(round_.signals):
                        ep.trace.fallback(f"asked about {len(asked)} of "
                                          f"{len(round_.signals)} signals: the rest would pass "
                                          f"ASK's call budget of {self.call_budget}")
                    round_.clarifications = await self._clarify(ep, schema, asked, left)
                    if not any(c.answered for c in round_.clarifications):
                        log.stop_reason = "no clarification question was answered"
                        return schema
                    new = await self._update(ep, schema, round_, left)
                span.outputs["version"] = new.version if new is not None else None
            if new is None:
                log.stop_reason = "schema update failed"
                return schema
            if new.canonical_hash() == schema.canonical_hash():
                log.stop_reason = "schema stable"
                return new
            schema = new
        log.stop_reason = f"max_iters={self.max_iters} reached"
        return schema

    async def _clarify(self, ep: Episode, schema: Schema, signals: Sequence[Signal],
                       left: Callable[[], int]) -> list[Clarification]:
        """F_ask, then A(P, D): each question searched over the whole collection. ``left()``
        is what remains of the call budget; the round was sized so that the questions, one
        answer each and the update fit, and a repair re-ask is made only where it still
        fits too."""
        try:
            result = await CLARIFY.run(ep.lm, trace=ep.trace, question=ep.question,
                                       schema=schema.describe(),
                                       problems=fenced(_problems(signals)),
                                       repairs=_repairs(left(), after=len(signals) + 1))
            queries = [q for q in result.value.questions if q.strip()][:len(signals)]
        except StepError:
            queries = []
        if len(queries) < len(signals):
            ep.trace.fallback(f"{len(signals) - len(queries)} clarification question(s) "
                              "missing; searched with the signal's own description")
            queries += [f"{s.table} {s.column} {s.detail}".strip()
                        for s in signals[len(queries):]]
        out = []
        for i, query in enumerate(queries):
            after = len(queries) - i      # the answers still to come, and the update
            if left() < 1 + after:
                ep.trace.fallback(f"clarification {query!r} not asked: it would pass ASK's "
                                  f"call budget of {self.call_budget}")
                out.append(Clarification(query=query, answered=False))
                continue
            hits = await ep.retrieve(query, self.k, cite=False)
            try:
                reply = await ANSWER_CLARIFICATION.run(ep.lm, trace=ep.trace, query=query,
                                                       documents=fenced(format_docs(hits)),
                                                       repairs=_repairs(left(), after=after))
                value = reply.value
                cited = [hits[i - 1].chunk.id for i in value.cited if 1 <= i <= len(hits)]
                answered = value.answered and bool(cited) and \
                    value.answer.strip().upper() != "UNANSWERED"
                out.append(Clarification(query=query, answered=answered, answer=value.answer,
                                         chunk_ids=cited))
            except StepError:
                ep.trace.fallback(f"clarification {query!r} could not be answered")
                out.append(Clarification(query=query, answered=False))
        return out

    def _fix(self, ep: Episode, schema: Schema, round_: AskRound) -> Schema:
        """The round's repairs (an invented key re-keyed by a stated name), in order;
        ``schema`` itself when there is none or none applied. Only applied repairs are
        recorded in the round's patches."""
        new = schema
        for s in round_.repairs:
            after, notes = apply_patches(new, [s.fix],
                                         reason=f"ask round {round_.iteration}: detector")
            round_.notes += notes
            if after is new:  # not applied (the notes say why)
                continue
            new = after
            round_.patches.append(s.fix.model_dump(exclude_defaults=True) | {"by": "detector"})
            ep.trace.fallback(f"schema repaired by the detector: {s.detail}")
        return new

    async def _update(self, ep: Episode, schema: Schema, round_: AskRound,
                      left: Callable[[], int]) -> Schema | None:
        """F_update (Eq. 3): patches from the findings, applied and validated; None when the
        model's update could not be read or the call budget has no room for it."""
        if left() < 1:
            ep.trace.fallback(f"schema update not asked: ASK's call budget of "
                              f"{self.call_budget} is spent; kept version {schema.version}")
            return None
        findings = "\n".join(
            f"- problem: {s.detail}\n  question: {c.query}\n  answer: "
            f"{c.answer if c.answered else 'UNANSWERED'}"
            for s, c in zip(round_.signals, round_.clarifications))
        try:
            result = await UPDATE_SCHEMA.run(ep.lm, trace=ep.trace, question=ep.question,
                                             schema=_draft_json(schema),
                                             findings=fenced(findings),
                                             repairs=_repairs(left(), after=0))
        except StepError as exc:
            ep.trace.fallback(f"schema update failed ({exc}); kept version {schema.version}")
            return None
        new, notes = apply_patches(schema, result.value.patches,
                                   reason=f"ask round {round_.iteration}")
        round_.patches += [p.model_dump(exclude_defaults=True) for p in result.value.patches]
        round_.notes += notes
        for note in notes:
            ep.trace.fallback(f"schema patch skipped or repaired: {note}")
        return new
