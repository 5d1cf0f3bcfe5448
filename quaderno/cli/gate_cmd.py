"""`quaderno gate ...`: make labels, train a CCSK gate and its baselines, score them, look
inside (CCSK, seed 003)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from quaderno.cli.common import HomeOption, console, friendly_errors, print_json, workspace
from quaderno.cli.llm_cmd import (BaseUrlOpt, ConfigOpt, KeyEnvOpt, LLMOpt, ModelOpt,
                                  ModelPathOpt, build_lm, llm_config)
from quaderno.errors import ConfigError
from quaderno.eval.datasets import DATASETS, load_dataset
from quaderno.methods.registry import parse_opts

def _exclude_questions(names: list[str] | None, fmt: str | None, data_dir: Path | None
                       ) -> list[str]:
    """Questions of each ``--exclude``: a named dataset, a dataset FILE (with --format), or a
    label / precomputed-answer file (JSONL)."""
    from quaderno.gate.labels import read_labels

    out: list[str] = []
    for name in names or []:
        if name in DATASETS or fmt is not None:
            out += [r.question for r in load_dataset(name, fmt=None if name in DATASETS
                                                     else fmt, data=data_dir)]
        elif Path(name).is_file():
            out += [r.question for r in read_labels(Path(name)).records]
        else:
            raise ConfigError(f"--exclude {name!r} is neither a dataset ({', '.join(DATASETS)}) "
                              "nor a file: give a dataset name, a label file, or a dataset "
                              "FILE with --exclude-format")
    return out


app = typer.Typer(help="CCSK: decide per question whether to retrieve (label, train, eval, "
                       "info, explain).", no_args_is_help=True)


@app.command("label")
@friendly_errors
def label(
    dataset: str = typer.Option(..., "--dataset", "-d", help=" | ".join(DATASETS) + " | FILE"),
    fmt: str = typer.Option(None, "--format", help="Format of a dataset FILE"),
    data_dir: Path = typer.Option(None, help="Benchmark data folder"),
    split: str = typer.Option(..., help="Split name the records get: train | val | test | …"),
    n: int = typer.Option(None, "--n", help="Label at most N questions (a seeded sample)"),
    seed: int = typer.Option(0, help="Seed of the sample order"),
    exclude: list[str] = typer.Option(None, "--exclude", help="Dataset (name, or FILE with "
                                      "--format) whose questions are kept out (repeatable)"),
    out: Path = typer.Option(..., "--out", help="Label file (JSONL; appended, resumable)"),
    method: str = typer.Option("vanilla-rag", "--method", "-m", help="Method of the retrieval "
                                                                     "answer"),
    kb: list[str] = typer.Option(None, "--kb", help="Knowledge base(s) to retrieve from "
                                                    "[default: all]"),
    mode: str = typer.Option("auto", help="Retrieval: auto | bm25 | dense | hybrid"),
    k: int = typer.Option(None, "--k", "-k", help="Documents per retrieval [method default]"),
    opt: list[str] = typer.Option(None, "--opt", "-o", help="A method option key=value"),
    metric: str = typer.Option("em", help="Label metric: em (SKR) | cover_em | acc | f1>0.5"),
    embedder: str = typer.Option("minilm", help="Embedder of the RQM target's cosine"),
    note: str = typer.Option("", help="A note stored with the provenance"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the LLM cache"),
    llm: str = LLMOpt, model: str = ModelOpt, base_url: str = BaseUrlOpt,
    api_key_env: str = KeyEnvOpt, model_path: str = ModelPathOpt, config: Path = ConfigOpt,
    home: Path = HomeOption,
) -> None:
    """Answer questions closed-book and with retrieval; label ir_better / ir_worse / same
    (resumable: run again to continue)."""
    from quaderno.gate.labelling import make_labels, provenance_for, select
    from quaderno.gate.labels import LabelWriter, read_labels
    from quaderno.index.embedders import make_embedder

    options = parse_opts(opt)
    if k is not None:
        options["k"] = k
    cfg = llm_config(home, config, backend=llm, model=model, base_url=base_url,
                     api_key_env=api_key_env, model_path=model_path)
    ws = workspace(home)
    names = list(kb) if kb else ws.kb_names()
    if not names:
        raise ConfigError("no knowledge base to retrieve from: add one (quaderno kb add) or "
                          "give --kb")
    retriever = ws.retriever(names, mode=mode)
    lm = build_lm(cfg, home, cache=False if no_cache else None)
    emb = make_embedder(embedder)
    prov = provenance_for(lm, retriever, method=method, options=options, metric=metric,
                          embedder=emb, note=note)
    kept_out: list[str] = []
    for name in exclude or []:
        kept_out += [r.question for r in load_dataset(name, fmt=None if name in DATASETS
                                                      else fmt, data=data_dir)]
    if out.exists() and out.stat().st_size:  # one question, one split
        kept_out += [r.question for r in read_labels(out).records if r.split != split]
    records = select(load_dataset(dataset, fmt=fmt, data=data_dir), n=n, seed=seed,
                     exclude=kept_out)
    writer = LabelWriter(out, prov)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as progress:
        task = progress.add_task(f"labelling {split}", total=len(records))
        progress.update(task, completed=sum(r.id in writer.done for r in records))
        asyncio.run(make_labels(records, writer, lm, retriever, split=split,
                                source=Path(dataset).stem, embedder=emb,
                                progress=lambda done, total: progress.update(task, advance=1)))
    labels = [r for r in read_labels(out).records if r.split == split]
    counts = {j: sum(r.judgement == j for r in labels) for j in ("ir_better", "ir_worse", "same")}
    console.print(f"{out}: {len(labels)} {split} labels {json.dumps(counts)}")


@app.command("train")
@friendly_errors
def train(
    labels: Path = typer.Option(..., "--labels", help="Label file (quaderno gate label)"),
    out: Path = typer.Option(..., "--out", help="Gate directory to write (versioned)"),
    embedder: str = typer.Option("minilm", help="Encoder of SN, RQM and the fusion: minilm | "
                                                "static:minilm (distilled, ~0.1 ms a text) | "
                                                "hash[:DIM] | st:MODEL"),
    skr: Path = typer.Option(None, help="SKR's labels (skr_training.json): added to the SN "
                                        "memory, recorded as InstructGPT's"),
    seed: int = typer.Option(0, help="Seed of folds, LightGBM and torch"),
    folds: int = typer.Option(5, help="Cross-fitting folds for the fusion's inputs"),
    k: int = typer.Option(5, help="SN neighbours (paper: 5)"),
    novelty: bool = typer.Option(True, help="SN's novelty default (retrieve when nothing in "
                                            "memory is similar)"),
    min_child_samples: int = typer.Option(20, help="LightGBM min_data_in_leaf"),
    pos_weight: float = typer.Option(None, help="BCE weight of positive rows in the fusion"),
    rqm_rounds: int = typer.Option(2000, help="Most LightGBM rounds (early stopping decides)"),
    epochs: int = typer.Option(30, help="Most fusion epochs (early stopping decides)"),
    label_metric: str = typer.Option(None, help="Judge the stored answers again with this "
                                                "metric (em | cover_em | acc | f1>0.5) "
                                                "[default: the file's labels]"),
    exclude: list[str] = typer.Option(None, "--exclude", help="Evaluation questions kept out "
                                      "of the SN memory and training: a dataset name, a label "
                                      "file, or a dataset FILE with --exclude-format "
                                      "(repeatable)"),
    exclude_format: str = typer.Option(None, "--exclude-format", help="Format of --exclude "
                                                                      "dataset FILEs"),
    data_dir: Path = typer.Option(None, help="Benchmark data folder (for --exclude)"),
) -> None:
    """Train CCSK (paper-literal and recommended) and the baselines; thresholds on val."""
    from quaderno.gate.labels import SKR_LLM, read_labels, read_skr, relabel
    from quaderno.gate.train import train_bundle
    from quaderno.index.embedders import make_embedder

    label_file = read_labels(labels)
    if label_metric:
        label_file = relabel(label_file, label_metric)
    bundle = train_bundle(label_file, make_embedder(embedder),
                          extra_memory=read_skr(skr) if skr else (), extra_llm=SKR_LLM,
                          exclude_questions=_exclude_questions(exclude, exclude_format, data_dir),
                          seed=seed, folds=folds, k=k, novelty=novelty,
                          min_child_samples=min_child_samples, pos_weight=pos_weight,
                          rqm_rounds=rqm_rounds, epochs=epochs)
    bundle.save(out)
    t = bundle.manifest.training
    ex = t["excluded"]
    console.print(f"trained gates {', '.join(bundle.names)} into {out} ({t['train']} train, "
                  f"{t['val']} val, SN memory {t['memory_drop_same']} / {t['memory_all']}; "
                  f"--exclude removed {ex['train']} train and {ex['extra_memory']} extra "
                  "memory questions)")


@app.command("eval")
@friendly_errors
def eval_(
    gate: list[str] = typer.Argument(..., help="Gate DIR (all its gates), DIR:GATE, always, "
                                               "never"),
    answers: Path = typer.Option(None, "--answers", help="Label file or precomputed answers "
                                 "(JSONL {question, golden_answers, answer_no_retrieval, "
                                 "answer_retrieval})"),
    split: str = typer.Option("test", help="Records of this split; `all` scores every split "
                                           "(train/val rows are in the SN memory or tuned "
                                           "the thresholds: optimistic)"),
    run: Path = typer.Option(None, "--run", help="Or: a `quaderno eval --gate` run directory"),
    report: Path = typer.Option(None, help="Write a Markdown report here"),
    json_out: Path = typer.Option(None, "--json-out", help="Write the full result as JSON"),
    allow_other_llm: bool = typer.Option(False, "--allow-other-llm", help="Score a gate on "
                                         "answers of another LLM than its labels' (warns)"),
    label_metric: str = typer.Option(None, help="Judge the answers with this metric for "
                                                "AUROC / the branch table [default: the "
                                                "file's labels]"),
) -> None:
    """Score gates (EM, F1, ACC, retrieval rate, gains, AUROC) on answered questions, with
    no LLM running; or summarise a live gated run."""
    from rich.table import Table

    from quaderno.eval.records import read_results
    from quaderno.gate.labels import read_labels, relabel
    from quaderno.gate.report import evaluate, markdown
    from quaderno.gate.scoring import score_run
    from quaderno.gate.store import GateBundle, load_gate, split_spec
    from quaderno.gate.wrapper import check_llm

    if run is not None:  # with --answers: the offline figures of the run's own decisions
        summary = score_run(read_results(run / "results.jsonl"),
                            read_labels(answers).records if answers is not None else ())
        print_json(summary)
        return
    if answers is None:
        raise ConfigError("give --answers FILE (labels or precomputed answers) or --run DIR")
    data = read_labels(answers)
    if label_metric:
        data = relabel(data, label_metric)
    if split == "all":
        records = data.records
        if any(r.split in ("train", "val") for r in records):
            console.print("[bold yellow]WARNING: --split all scores train and val rows too: "
                          "train questions are in the SN memory and val tuned the thresholds, "
                          "so these figures are optimistic; score --split test[/]")
    elif not any(r.split for r in data.records):  # precomputed answers carry no split
        records = data.records
        console.print(f"{answers} has no splits: scoring all {len(records)} records")
    else:
        records = data.split(split)
    if not records:
        present = sorted({r.split or "''" for r in data.records})
        raise ConfigError(f"{answers} has no records of split {split!r} (it has "
                          f"{', '.join(present)}); pick one with --split, or --split all")
    gates, bundle = [], None
    for spec in gate:
        path, name = split_spec(spec)
        if name is None and Path(path).is_dir():
            bundle = GateBundle.load(Path(path))
            gates += [bundle.gate(n) for n in bundle.names]
        else:
            gates.append(load_gate(spec))
    llm = data.provenance.llm if data.provenance else None  # None: the answers' LLM unknown
    for g in gates:
        for note in check_llm(g, llm, allow_other_llm=allow_other_llm):
            console.print(f"[bold yellow]WARNING: gate {g.name}: {note}[/]")
    result = evaluate(gates, records)
    table = Table("gate", "EM", "F1", "ACC", "retr.", "vs never", "vs always", "calls/q",
                  "AUROC", title=f"{len(records)} questions")
    for name, g in result["gates"].items():
        s = g["score"]
        table.add_row(name, *(f"{s[k] * 100:.1f}" for k in ("em", "f1", "acc",
                                                              "retrieval_rate")),
                      f"{s['gain_over_never'] * 100:+.1f}", f"{s['gain_over_always'] * 100:+.1f}",
                      f"{s['llm_calls']:.2f}",
                      "–" if s["auroc"] is None else f"{s['auroc']:.2f}")
    console.print(table)
    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    if report:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(markdown(result, labels=data, split=split,
                                   manifest=bundle.manifest.model_dump(mode="json")
                                   if bundle else None,
                                   extras=bundle.extras if bundle else None), encoding="utf-8")
        console.print(f"wrote {report}")


@app.command("cv")
@friendly_errors
def cv(
    labels: Path = typer.Option(..., "--labels", help="Label file (every split is used)"),
    embedder: str = typer.Option("minilm", help="Encoder of SN, RQM and the fusion"),
    skr: Path = typer.Option(None, help="SKR's labels, added to every fold's SN memory"),
    folds: int = typer.Option(5, help="Outer folds"),
    val_fraction: float = typer.Option(0.25, help="Share of each fold's training questions "
                                                  "that tunes the thresholds"),
    seed: int = typer.Option(0),
    min_child_samples: int = typer.Option(20, help="LightGBM min_data_in_leaf"),
    rqm_rounds: int = typer.Option(2000), epochs: int = typer.Option(30),
    label_metric: str = typer.Option(None, help="Judge the stored answers with this metric"),
    exclude: list[str] = typer.Option(None, "--exclude", help="Evaluation questions kept out "
                                      "of every fold's SN memory (as gate train --exclude)"),
    exclude_format: str = typer.Option(None, "--exclude-format"),
    data_dir: Path = typer.Option(None, help="Benchmark data folder (for --exclude)"),
    report: Path = typer.Option(None, help="Write a Markdown report here"),
    json_out: Path = typer.Option(None, "--json-out", help="Write the full result as JSON"),
) -> None:
    """Cross-validate every gate over all labelled questions: each question is decided by
    gates trained (and tuned) without it."""
    from quaderno.gate.crossval import cross_validate
    from quaderno.gate.labels import SKR_LLM, read_labels, read_skr, relabel
    from quaderno.gate.report import evaluate_decisions, markdown
    from quaderno.index.embedders import make_embedder

    data = read_labels(labels)
    if label_metric:
        data = relabel(data, label_metric)
    records, decided = cross_validate(
        data, make_embedder(embedder), folds=folds, seed=seed, val_fraction=val_fraction,
        extra_memory=read_skr(skr) if skr else (), extra_llm=SKR_LLM,
        min_child_samples=min_child_samples, rqm_rounds=rqm_rounds, epochs=epochs,
        exclude_questions=_exclude_questions(exclude, exclude_format, data_dir))
    result = evaluate_decisions(records, decided)
    for name, g in result["gates"].items():
        s = g["score"]
        console.print(f"{name:13s} EM {s['em'] * 100:5.1f}  F1 {s['f1'] * 100:5.1f}  ACC "
                      f"{s['acc'] * 100:5.1f}  retrieval {s['retrieval_rate'] * 100:5.1f}%  "
                      f"vs never {s['gain_over_never'] * 100:+5.1f}")
    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    if report:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(markdown(result, labels=data, split=f"{folds}-fold cross-validated"),
                          encoding="utf-8")
        console.print(f"wrote {report}")


@app.command("info")
@friendly_errors
def info(gate: Path = typer.Argument(..., help="Gate directory"),
         json_out: bool = typer.Option(False, "--json")) -> None:
    """What a trained gate holds: its gates and thresholds, the LLM of its labels, memory."""
    from quaderno.gate.store import GateBundle

    bundle = GateBundle.load(gate)
    data = bundle.manifest.model_dump(mode="json")
    data["training"] = {k: v for k, v in data["training"].items()
                        if not isinstance(v, dict) or k in ("train_labels", "excluded")}
    data["gates"] = bundle.names
    if json_out:
        print_json(data)
        return
    console.print(f"[bold]{gate}[/]: gates {', '.join(bundle.names)} (default "
                  f"{data['default']})")
    console.print(f"labels made with [bold]{data['labels_llm']}[/]; embedder {data['embedder']}")
    console.print(f"SN memory sources: {data['memory_sources']}; θ_new {data['sn']['theta_new']}")
    for name, cfg in data["fusions"].items():
        console.print(f"{name}: attention {cfg['attention']}, trust {cfg['trust']}, thresholds "
                      f"{cfg['thresholds']}")
    console.print(f"single-score gates: {data['score_gates']}")
    console.print(f"training: {data['training']}")


@app.command("explain")
@friendly_errors
def explain(
    question: str = typer.Argument(..., help="The question"),
    gate: str = typer.Option(..., "--gate", help="Gate DIR or DIR:GATE"),
    response: str = typer.Option(None, help="The closed-book response [default: ask the LLM]"),
    allow_other_llm: bool = typer.Option(False, "--gate-allow-other-llm"),
    llm: str = LLMOpt, model: str = ModelOpt, base_url: str = BaseUrlOpt,
    api_key_env: str = KeyEnvOpt, model_path: str = ModelPathOpt, config: Path = ConfigOpt,
    home: Path = HomeOption,
) -> None:
    """Show how a gate decides QUESTION: SN's neighbours, F_SN, F_RQM, g, p, Eq. 7's branch."""
    from quaderno.gate.store import load_gate
    from quaderno.gate.wrapper import check_llm
    from quaderno.methods.registry import make_method

    chosen = load_gate(gate)
    if response is None and chosen.needs_response:
        cfg = llm_config(home, config, backend=llm, model=model, base_url=base_url,
                         api_key_env=api_key_env, model_path=model_path)
        lm = build_lm(cfg, home)
        check_llm(chosen, lm, allow_other_llm=allow_other_llm)
        closed = asyncio.run(make_method("vanilla-llm", lm, None).answer(question))
        response = closed.explanation or closed.answer
    decision = chosen.decide([question], [response or ""])[0]
    console.print(f"[bold]{decision.gate}[/]: {'RETRIEVE' if decision.retrieve else 'no retrieval'}"
                  f" (branch {decision.branch})")
    if response:
        console.print(f"closed-book response: {response!r}")
    for key in ("f_sn", "f_rqm", "g_a", "g_w", "g", "p", "trust", "thresholds", "novelty_fired",
                "max_sim", "labels_llm"):
        value = getattr(decision, key)
        if value is not None:
            console.print(f"  {key}: {value}")
    for i, q in enumerate(decision.neighbours, start=1):
        console.print(f"  neighbour {i}: {q}")
    for note in decision.notes:
        console.print(f"  note: {note}")
