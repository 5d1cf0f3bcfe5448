"""`quaderno ask`: answer a question with PAGER (default) or any other method."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text
from rich.table import Table

from quaderno.ask import aask
from quaderno.cli.common import (GateOption, GateOtherLLMOption, HomeOption, ProfileOption,
                                 console,
                                 friendly_errors, print_json, workspace)
from quaderno.cli.llm_cmd import (BaseUrlOpt, ConfigOpt, KeyEnvOpt, LLMOpt, ModelOpt,
                                  ModelPathOpt, ReasonerBaseUrlOpt, ReasonerLLMOpt,
                                  ReasonerModelOpt, build_lm, llm_config, role_lms)
from quaderno.errors import ConfigError
from quaderno.methods.answer import Answer
from quaderno.methods.details import DocSageDetails
from quaderno.llm.profiles import apply_profile, get_profile, profile_options
from quaderno.methods.registry import METHODS, get_spec, parse_opts


@friendly_errors
def ask(
    question: str = typer.Argument(..., help="The question"),
    method: str = typer.Option("pager", "--method", "-m", help=" | ".join(METHODS)),
    kb: list[str] = typer.Option(None, "--kb", help="Knowledge base(s) [default: all]"),
    k: int = typer.Option(None, "--k", "-k", help="Documents per retrieval [default: the "
                                                  "method's, 5 for most]"),
    mode: str = typer.Option("auto", help="Retrieval: auto | bm25 | dense | hybrid"),
    max_iters: int = typer.Option(None, help="Most slot fills / rounds, for methods with "
                                             "max_iters (same as --opt max_iters=N)"),
    opt: list[str] = typer.Option(None, "--opt", "-o", help="A method option key=value "
                                  "(repeatable; `quaderno methods` lists them)"),
    show_trace: bool = typer.Option(False, "--trace", help="Show every step: pages, "
                                                           "sub-queries, documents, timings"),
    json_out: bool = typer.Option(False, "--json", help="The answer object as JSON"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the LLM cache"),
    llm: str = LLMOpt, model: str = ModelOpt, base_url: str = BaseUrlOpt,
    api_key_env: str = KeyEnvOpt, model_path: str = ModelPathOpt, config: Path = ConfigOpt,
    reasoner_llm: str = ReasonerLLMOpt, reasoner_model: str = ReasonerModelOpt,
    reasoner_base_url: str = ReasonerBaseUrlOpt,
    gate: str = GateOption, gate_allow_other_llm: bool = GateOtherLLMOption,
    profile: str = ProfileOption,
    home: Path = HomeOption,
) -> None:
    """Answer QUESTION from your knowledge bases."""
    get_profile(profile)  # an unknown profile fails before anything loads
    cfg = llm_config(home, config, backend=llm, model=model, base_url=base_url,
                     api_key_env=api_key_env, model_path=model_path)
    options = parse_opts(opt)
    if max_iters is not None:
        options.setdefault("max_iters", max_iters)
    if k is not None and get_spec(method).needs_retrieval:
        options.setdefault("k", k)
    options = profile_options(profile, get_spec(method).options.model_fields, options)
    get_spec(method).validate(options)  # a bad option fails before any model loads
    cache = False if no_cache else None
    named = [flag for flag, value in (("--reasoner-llm", reasoner_llm),
                                      ("--reasoner-model", reasoner_model),
                                      ("--reasoner-base-url", reasoner_base_url)) if value]
    if named and "reasoner" not in get_spec(method).roles:
        raise ConfigError(f"{named[0]}: method {method!r} has no reasoner")
    roles = role_lms(home, config, cfg, cache=cache,
                     reasoner={"backend": reasoner_llm, "model": reasoner_model,
                               "base_url": reasoner_base_url},
                     # other roles (DocSage's extractor, committee): config table or env only
                     **{r: {} for r in get_spec(method).roles if r != "reasoner"})
    roles = {r: apply_profile(lm, profile) for r, lm in roles.items()
             if r in get_spec(method).roles}
    answer = asyncio.run(aask(question, method=method, kbs=kb, mode=mode, k=k,
                              lm=apply_profile(build_lm(cfg, home, cache=cache), profile),
                              roles=roles,
                              workspace=workspace(home), options=options, gate=gate,
                              gate_allow_other_llm=gate_allow_other_llm))
    if json_out:
        print_json(answer.model_dump(mode="json"))
        return
    if show_trace:
        print_trace(answer)
    console.print(Panel(answer.answer, title=f"answer ({answer.method})", expand=False))
    if answer.gate is not None:
        g = answer.gate
        console.print(f"[dim]gate {g.gate}: {'retrieved' if g.retrieve else 'no retrieval'} "
                      f"(branch {g.branch}, {g.seconds * 1000:.1f} ms)[/]")
    if isinstance(answer.details, DocSageDetails):
        print_docsage(answer.details)
    if answer.supporting_sections:
        console.print(f"[dim]supported by: {'; '.join(answer.supporting_sections)}[/]")
    s = answer.trace.summary()
    fallbacks = f", {len(s['fallbacks'])} fallbacks" if s["fallbacks"] else ""
    console.print(f"[dim]{s['llm_calls']} LLM calls, {s['prompt_tokens']} prompt + "
                  f"{s['completion_tokens']} completion tokens, {s['llm_seconds']:.1f}s in the "
                  f"LLM{fallbacks}[/]")


def print_trace(answer: Answer) -> None:
    """Every span as a tree (children indented under their parent), then LLM calls by step."""
    trace = answer.trace
    for span in trace.spans:
        pad = "  " * trace.depth(span)
        calls = sum(c.span_id == span.id for c in trace.calls)
        head = (f"{pad}[bold]{span.name}[/] [dim]{span.seconds:.2f}s"
                + (f", {calls} LLM call{'s' * (calls > 1)}" if calls else "") + "[/]")
        # model and document text is shown as text, never read as rich markup
        if span.name == "retrieve":
            console.print(f"{head}  query: {escape(repr(span.inputs.get('query')))}",
                          soft_wrap=True)
            for title in span.outputs.get("titles", []):
                console.print(f"{pad}    · {escape(title)}", soft_wrap=True)
        elif "page" in span.outputs:
            sub = span.inputs.get("sub_query")
            console.print(head + (f"  sub-query: {escape(repr(sub))}" if sub else ""),
                          soft_wrap=True)
            console.print(Panel(Text(span.outputs["page"]), expand=False))
        else:
            shown = ", ".join(f"{k}={v!r}" for k, v in span.outputs.items())
            console.print(f"{head}  {escape(shown)}", soft_wrap=True)
        for note in span.notes:
            console.print(f"{pad}    [yellow]fallback:[/] {escape(note)}", soft_wrap=True)
    table = Table("step", "calls", "prompt tok", "completion tok", "seconds", title="LLM calls")
    per: dict[str, list[float]] = {}
    for call in trace.calls:
        row = per.setdefault(call.step or "-", [0, 0, 0, 0.0])
        row[0] += 1
        row[1] += call.usage.prompt_tokens
        row[2] += call.usage.completion_tokens
        row[3] += call.latency_s
    for step, (n, p, c, sec) in per.items():
        table.add_row(step, str(n), str(p), str(c), f"{sec:.2f}")
    console.print(table)


def print_docsage(d: DocSageDetails) -> None:
    """DocSage's schema (and the stored tables its draft was offered), the SQL that ran,
    and the result rows with the chunks behind them."""
    if d.ask is not None and d.ask.offered:
        console.print(Text(f"schema draft offered {len(d.ask.offered)} stored table(s): "
                           + "; ".join(d.ask.offered), style="dim"), soft_wrap=True)
    if d.db_schema is not None:
        for t in d.db_schema.tables:
            shown = len(d.tables.get(t.name, []))
            n = d.table_sizes.get(t.name)
            rows = f"{n} row{'' if n == 1 else 's'}" if n is not None else \
                f"{shown}{'+' if shown >= 20 else ''} rows"    # a record made before sizes
            console.print(f"[dim]table {escape(t.name)}({escape(', '.join(t.column_names))})"
                          f" — {rows}[/]", soft_wrap=True)
    for note in d.scoped_keys:   # ids the query sees renumbered (docsage.scoped_ids)
        console.print(Text(f"ids numbered per chunk: {note}", style="dim"), soft_wrap=True)
    ran = [a for a in d.sql if a.stage == "ok"]
    if ran:
        console.print(Text(f"SQL: {ran[-1].sql}", style="cyan"), soft_wrap=True)
    if d.result is not None and d.result.rows:
        table = Table(*d.result.columns, "sources", title=f"result ({d.result.lineage} lineage)")
        for row, sources in list(zip(d.result.rows, d.result.sources))[:10]:
            where = ", ".join(dict.fromkeys(s.chunk_id for s in sources))
            table.add_row(*(Text(str(v)) for v in row), Text(where[:80]))
        console.print(table)
    if d.ungrounded:
        then = ("the answer is the result rows" if d.from_rows
                else "asked once more, it answered from the result")
        console.print(Text(f"the model's answer gave {', '.join(d.ungrounded)}, which no "
                           f"result row holds; {then}", style="yellow"), soft_wrap=True)
    elif d.from_rows:
        why = d.from_rows_why or "the model's answer was not borne out by the result"
        console.print(Text(f"{why}; the answer is the result rows", style="yellow"),
                      soft_wrap=True)
    if d.explanation_ungrounded:
        console.print(Text(f"the model's explanation gave {', '.join(d.explanation_ungrounded)}"
                           ", which no result row holds; it is left out", style="yellow"),
                      soft_wrap=True)
    ended = d.clear.get("links_ended") or []
    for e in ended[:5]:
        values = ", ".join(str(v) for v in e["values"].values())
        console.print(Text(f"left out as ended: {e['table']}({values}) in {e['chunk_id']}: "
                           f"\"{e['quote']}\" ({e['said_in']})", style="dim"), soft_wrap=True)
    if len(ended) > 5:
        console.print(Text(f"... {len(ended) - 5} more link rows left out as ended",
                           style="dim"))
