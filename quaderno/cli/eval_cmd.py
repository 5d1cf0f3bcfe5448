"""`quaderno eval` and `quaderno report`."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from quaderno.cli.common import (GateOption, GateOtherLLMOption, HomeOption, ProfileOption,
                                 console,
                                 friendly_errors, workspace)
from quaderno.cli.llm_cmd import (BaseUrlOpt, ConfigOpt, KeyEnvOpt, LLMOpt, ModelOpt,
                                  ModelPathOpt, ReasonerBaseUrlOpt, ReasonerLLMOpt,
                                  ReasonerModelOpt, build_lm, llm_config, role_lms)
from quaderno.errors import ConfigError
from quaderno.eval.datasets import DATASETS, load_dataset
from quaderno.eval.dig import DIG_ALIASES
from quaderno.eval.report import (HEADLINE, load_run, nan_text, paired, paired_cells,
                                  run_labels, table, write_report)
from quaderno.eval.run_config import default_k, method_options_for, run_config  # noqa: F401
from quaderno.eval.runner import EvalRunner
from quaderno.llm.profiles import apply_profile, get_profile, profile_options
from quaderno.methods.registry import METHODS, get_spec, parse_opts


@friendly_errors
def eval_(
    dataset: str = typer.Option(..., "--dataset", "-d", help=" | ".join(DATASETS) + " | FILE"),
    method: list[str] = typer.Option(["pager"], "--method", "-m", help=" | ".join(METHODS)
                                     + " (repeat for several)"),
    limit: int = typer.Option(None, help="First N questions"),
    fmt: str = typer.Option(None, "--format", help="Format of a dataset FILE"),
    data_dir: Path = typer.Option(None, help="Benchmark data folder [default: $QUADERNO_DATA "
                                             "or ../shared/data]"),
    pool: str = typer.Option("per-question", help="per-question | pooled (the dataset's own "
                                                  "paragraphs) | kb (your --kb)"),
    kb: list[str] = typer.Option(None, "--kb", help="Knowledge bases for --pool kb"),
    retrieval: str = typer.Option("bm25", help="bm25 | dense | hybrid | auto"),
    embedder: str = typer.Option(None, help="Embedder for dataset pools (with dense/hybrid)"),
    k: int = typer.Option(None, "--k", "-k", help="Documents per retrieval [default: each "
                                                  "method's, 5 for most]"),
    max_iters: int = typer.Option(10, help="Most slot fills / rounds, for methods with "
                                           "max_iters"),
    opt: list[str] = typer.Option(None, "--opt", "-o", help="A method option key=value, for "
                                  "every --method that has it (repeatable; see `quaderno "
                                  "methods`)"),
    concurrency: int = typer.Option(4, help="Questions in flight"),
    out: Path = typer.Option(Path("runs"), help="Folder for run directories"),
    name: str = typer.Option(None, help="Run directory name [default: dataset-method-model]"),
    temperature: float = typer.Option(None, help="Sampling temperature [default 0]"),
    top_p: float = typer.Option(None, help="Nucleus sampling"),
    seed: int = typer.Option(None, help="Seed [default 0]"),
    judges: str = typer.Option("", help="Comma list: context_recall, quality"),
    judge_llm: str = typer.Option(None, help="Judge backend [default: the answering LLM's]"),
    judge_model: str = typer.Option(None, help="Judge model"),
    judge_base_url: str = typer.Option(None, help="Judge base URL"),
    measure: list[str] = typer.Option(None, "--measure", help="Another evaluation measure by "
                                      "name (repeatable; see quaderno.eval.measures)"),
    dig: bool = typer.Option(False, "--dig", help="Document information gain of each answer's "
                             "context (PAGER A.3; the answering LLM scores the gold answer)"),
    dig_alias: str = typer.Option("first", "--dig-alias", help="Which gold alias DIG scores: "
                                  "first, likely (highest p(gold | q, context)) or max_gain "
                                  "(optimistic: chosen by the gain itself)"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the LLM cache"),
    llm: str = LLMOpt, model: str = ModelOpt, base_url: str = BaseUrlOpt,
    api_key_env: str = KeyEnvOpt, model_path: str = ModelPathOpt, config: Path = ConfigOpt,
    reasoner_llm: str = ReasonerLLMOpt, reasoner_model: str = ReasonerModelOpt,
    reasoner_base_url: str = ReasonerBaseUrlOpt,
    gate: str = GateOption, gate_allow_other_llm: bool = GateOtherLLMOption,
    profile: str = ProfileOption,
    home: Path = HomeOption,
) -> None:
    """Run methods over a dataset; resumable (run again with the same options to continue)."""
    get_profile(profile)
    extra = parse_opts(opt)
    if dig_alias not in DIG_ALIASES:
        raise ConfigError(f"--dig-alias must be one of {', '.join(DIG_ALIASES)}, got "
                          f"{dig_alias!r}")
    method_options = {m: method_options_for(m, max_iters, profile_options(
        profile, get_spec(m).options.model_fields, extra)) for m in method}
    known = {key for m in method for key in get_spec(m).options.model_fields}
    unused = sorted(set(extra) - known)
    if unused:
        raise ConfigError(f"no --method here has option {unused[0]!r}; see `quaderno methods`")
    cfg = llm_config(home, config, backend=llm, model=model, base_url=base_url,
                     api_key_env=api_key_env, model_path=model_path, temperature=temperature,
                     top_p=top_p, seed=seed)
    lm = _profiled(build_lm(cfg, home, cache=False if no_cache else True), profile,
                   temperature=temperature, top_p=top_p, seed=seed)
    all_roles = {r: _profiled(x, profile, temperature=temperature, top_p=top_p, seed=seed)
                 for r, x in role_lms(home, config, cfg, cache=False if no_cache else True,
                                      reasoner={"backend": reasoner_llm,
                                                "model": reasoner_model,
                                                "base_url": reasoner_base_url}).items()}
    judge_list = [j.strip() for j in judges.split(",") if j.strip()]
    judge = None
    if judge_list:
        jcfg = llm_config(home, config, backend=judge_llm or cfg.backend,
                          model=judge_model or cfg.model, base_url=judge_base_url or cfg.base_url,
                          api_key_env=api_key_env, model_path=model_path)
        # its own LM even for the answering model: the judge keeps greedy decoding whatever
        # the generation profile of the run
        judge = build_lm(jcfg, home)
    records = load_dataset(dataset, fmt=fmt, limit=limit, data=data_dir)
    ws = workspace(home) if pool == "kb" else None
    for m in method:
        options = method_options[m]
        roles = {r: x for r, x in all_roles.items() if r in get_spec(m).roles}
        run_cfg = run_config(dataset=dataset, method=m, options=options, lm=lm, roles=roles,
                             limit=limit, k=k, pool=pool, kbs=kb or [], retrieval=retrieval,
                             embedder=embedder, judge=judge, judges=judge_list, dig=dig,
                             dig_alias=dig_alias,
                             measures=measure or [], gate=gate,
                             gate_allow_other_llm=gate_allow_other_llm)
        gated = f"-gate-{Path(gate).name}" if gate else ""
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", name or f"{Path(dataset).stem}-{m}{gated}-"
                      f"{lm.model_id.split(':', 1)[-1]}")
        run_dir = out / (slug if len(method) == 1 or name is None else f"{slug}-{m}")
        runner = EvalRunner(run_cfg, run_dir, lm=lm, judge=judge, workspace=ws,
                            concurrency=concurrency, roles=roles)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console) as progress:
            task = progress.add_task(f"{m} on {dataset}", total=len(records))
            results = asyncio.run(runner.run(
                records, progress=lambda done, total, task=task: progress.update(
                    task, completed=done)))
        summary = load_run(run_dir)
        scores = ", ".join(f"{k} {summary['mean'][k] * 100:.1f}" for k in HEADLINE
                           if k in summary["mean"])
        console.print(f"[green]{m}[/]: {len(results)} questions in {run_dir} — {scores}")
        if runner.failures:
            console.print(f"[yellow]{len(runner.failures)} questions failed and were left out "
                          f"(run again to retry them); first: {runner.failures[0][1]}[/]")


@friendly_errors
def report(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories"),
    out: Path = typer.Option(None, help="Where to write report.md/.html and plots "
                                        "[default: the first run's parent]/report"),
    metric: str = typer.Option("cover_em", help="Metric of the printed table and of the "
                                                "paired differences"),
    baseline: str = typer.Option(None, help="Compare every run with this one (a method, or a "
                                            "run directory's name) [default: every pair of "
                                            "runs on a dataset, later − earlier]"),
    plots: bool = typer.Option(True, help="Draw plots (matplotlib)"),
) -> None:
    """Print a methods × datasets table and the paired per-question differences between
    runs on the same dataset (bootstrap CI); write a Markdown/HTML report with plots."""
    runs = [load_run(d) for d in run_dirs]
    methods, datasets, cells = table(runs, metric)
    t = Table("method", *datasets, title=f"{metric} (%)")
    for m in methods:
        t.add_row(m, *[f"{cells[(m, d)] * 100:.1f}" if cells.get((m, d)) is not None else "–"
                       for d in datasets])
    console.print(t)
    for r, label in zip(runs, run_labels(runs)):
        if any(r["nan"].values()):
            console.print(f"[yellow]{label} on {r['config']['dataset']}: no judge score "
                          f"(NaN, left out of the means) for {nan_text(r)}[/]")
    diffs = paired(runs, metric, baseline=baseline)
    for dataset in dict.fromkeys(dataset for dataset, _ in diffs):
        rows = [d for name, d in diffs if name == dataset]
        t = Table("A", "B", "n", "A", "B", "A−B", f"{rows[0].confidence:.0%} CI", "A>B", "B>A",
                  "tie", "McNemar", title=f"{dataset}: paired differences of {metric} ×100 "
                  f"(bootstrap {rows[0].resamples}, seed {rows[0].seed})")
        for d in rows:
            t.add_row(d.a, d.b, str(d.n), *paired_cells(d))
        console.print(t)
    paths = write_report(run_dirs, out or Path(run_dirs[0]).parent / "report", plots=plots,
                         metric=metric, runs=runs, diffs=diffs)
    console.print(f"wrote {paths['markdown']} and {paths['html']}")


def _profiled(lm, profile: str, **explicit):  # noqa: ANN001, ANN202 - an LM
    """``lm`` with the generation profile; a --temperature/--top-p/--seed given explicitly
    wins over the profile's."""
    apply_profile(lm, profile)
    lm.defaults.update({k: v for k, v in explicit.items() if v is not None})
    return lm
