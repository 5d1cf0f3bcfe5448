"""Reports over run directories: a methods × datasets table like the papers', per-question
paired differences between the runs on each dataset (:mod:`quaderno.eval.paired`), and a
Markdown + HTML report with plots (score per method and dataset, tokens and latency per
method, score by number of retrieval rounds).

A run's mean of a metric is over the questions that have it: a judge's score that failed
(flagged ``<metric>_nan`` by the measure) is counted apart, never averaged as 0. A run is
named by its method, or by its directory where several runs of one method share a dataset
(misknow over different knowledge bases)."""

from __future__ import annotations

import html
import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from quaderno.errors import ConfigError, NotFoundError
from quaderno.eval.analyses import degeneration_lines, knowledge_split_lines
from quaderno.eval.paired import RESAMPLES, SEED, PairedDifference, paired_difference
from quaderno.eval.records import read_results

HEADLINE = ("cover_em", "acc", "em", "f1")
NAN_SUFFIX = "_nan"  # a measure's flag: the judge gave no score for <metric>


def load_run(run_dir: Path) -> dict[str, Any]:
    """A run's configuration and its results summarized: mean of each metric, mean cost per
    question, share of cached calls, score by number of retrieval rounds."""
    config_path = Path(run_dir) / "config.json"
    if not config_path.is_file():
        raise NotFoundError(f"{run_dir} is not a run directory (no config.json)")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    results = read_results(Path(run_dir) / "results.jsonl")
    metrics: dict[str, list[float]] = defaultdict(list)
    nan: dict[str, int] = defaultdict(int)
    for r in results:
        for name, value in r.metrics.items():
            if name.endswith(NAN_SUFFIX):
                nan[name.removesuffix(NAN_SUFFIX)] += int(bool(value))
            else:
                metrics[name].append(value)
    mean = {name: statistics.mean(vals) for name, vals in metrics.items() if vals}
    by_rounds: dict[int, list[float]] = defaultdict(list)
    for r in results:
        by_rounds[len(r.retrieval_rounds)].append(r.metrics.get("cover_em", 0.0))
    return {
        "dir": str(run_dir), "config": config, "n": len(results), "mean": mean,
        "nan": dict(nan),  # metric → questions its judge could not score
        "scores": {r.id: r.metrics for r in results},
        "tokens": {"prompt_tokens": _mean(r.prompt_tokens for r in results),
                   "completion_tokens": _mean(r.completion_tokens for r in results),
                   "llm_calls": _mean(r.llm_calls for r in results)},
        "latency_s": _mean(r.latency_s for r in results),
        # latency is wall time: calls answered from the LLM cache make it shorter
        "cached_share": (sum(r.cached_calls for r in results)
                         / max(1, sum(r.llm_calls for r in results))),
        "fallbacks": _mean(len(r.fallbacks) for r in results),
        "by_rounds": {k: statistics.mean(v) for k, v in sorted(by_rounds.items())},
    }


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return statistics.mean(values) if values else 0.0


def run_labels(runs: list[dict[str, Any]]) -> list[str]:
    """Each run's name in tables: its method (behind a gate: ``GATE>method``), or its
    directory's name where another run of the same method is on the same dataset."""
    names = [_gated(r["config"]) for r in runs]
    keys = [(name, r["config"]["dataset"]) for name, r in zip(names, runs)]
    return [name if keys.count(key) == 1 else Path(r["dir"]).name
            for name, r, key in zip(names, runs, keys)]


def _gated(config: dict[str, Any]) -> str:
    gate = config.get("gate")
    return f"{Path(gate).name}>{config['method']}" if gate else config["method"]


def table(runs: list[dict[str, Any]], metric: str) -> tuple[list[str], list[str], dict]:
    labels = run_labels(runs)
    methods = list(dict.fromkeys(labels))
    datasets = list(dict.fromkeys(r["config"]["dataset"] for r in runs))
    cells = {(label, r["config"]["dataset"]): r["mean"].get(metric)
             for label, r in zip(labels, runs)}
    return methods, datasets, cells


def paired(runs: list[dict[str, Any]], metric: str, *, baseline: str | None = None,
           resamples: int = RESAMPLES, seed: int = SEED,
           ) -> list[tuple[str, PairedDifference]]:
    """(dataset, difference) for the runs on each dataset, matched by question id: every
    run against the ``baseline`` run (a method or a run's name), else every later run
    against every earlier one, in the order given."""
    labels = run_labels(runs)
    by_dataset: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for label, r in zip(labels, runs):
        by_dataset[r["config"]["dataset"]].append((label, r))
    if baseline is not None and not any(baseline in (label, r["config"]["method"])
                                        for label, r in zip(labels, runs)):
        raise ConfigError(f"no run is {baseline!r}: give --baseline one of "
                          f"{', '.join(dict.fromkeys(labels))}")
    pairs = []
    for dataset, group in by_dataset.items():
        if baseline is None:
            pairs += [(dataset, group[j], group[i]) for i in range(len(group))
                      for j in range(i + 1, len(group))]
            continue
        base = [(label, r) for label, r in group if baseline in (label, r["config"]["method"])]
        if len(base) > 1:
            raise ConfigError(f"{len(base)} runs on {dataset} are {baseline!r}: give "
                              f"--baseline one of {', '.join(label for label, _ in base)}")
        pairs += [(dataset, other, base[0]) for other in group
                  if base and other[1] is not base[0][1]]
    out = []
    for dataset, (label_a, a), (label_b, b) in pairs:
        diff = paired_difference(_metric_of(a, metric), _metric_of(b, metric), metric=metric,
                                 label_a=label_a, label_b=label_b, resamples=resamples,
                                 seed=seed)
        if diff is not None:
            out.append((dataset, diff))
    return out


def _metric_of(run: dict[str, Any], metric: str) -> dict[str, float]:
    return {qid: m[metric] for qid, m in run["scores"].items() if metric in m}


def paired_markdown(diffs: list[tuple[str, PairedDifference]], metric: str) -> list[str]:
    if not diffs:
        return []
    first = diffs[0][1]
    lines = [f"## Paired differences: {metric}", "",
             f"Per question, matched by id, A − B (×100); {first.confidence:.0%} CI: paired "
             f"bootstrap over questions, {first.resamples} resamples, seed {first.seed}; "
             "McNemar: exact two-sided p on the discordant questions (0/1 metrics only).", "",
             "| dataset | A | B | n | mean A | mean B | A − B | "
             f"{first.confidence:.0%} CI | A better | B better | tied | McNemar p |",
             "|---" * 12 + "|"]
    for dataset, d in diffs:
        lines.append(" | ".join(["", dataset, d.a, d.b, str(d.n)] + paired_cells(d)).strip()
                     + " |")
    return lines + [""]


def paired_cells(d: PairedDifference) -> list[str]:
    """The printed cells of a difference after its names and n."""
    return [f"{d.mean_a * 100:.1f}", f"{d.mean_b * 100:.1f}", f"{d.diff * 100:+.1f}",
            f"[{d.ci_low * 100:+.1f}, {d.ci_high * 100:+.1f}]", str(d.better), str(d.worse),
            str(d.tied), "–" if d.mcnemar_p is None else f"{d.mcnemar_p:.3g}"]


def markdown(runs: list[dict[str, Any]], plots: list[str],
             diffs: list[tuple[str, PairedDifference]] | None = None,
             paired_metric: str = "cover_em") -> str:
    lines = ["# quaderno evaluation report", ""]
    for metric in HEADLINE:
        methods, datasets, cells = table(runs, metric)
        lines += [f"## {metric}", "", "| method | " + " | ".join(datasets) + " |",
                  "|---" * (len(datasets) + 1) + "|"]
        for m in methods:
            row = [f"{cells[(m, d)] * 100:.1f}" if cells.get((m, d)) is not None else "–"
                   for d in datasets]
            lines.append(f"| {m} | " + " | ".join(row) + " |")
        lines.append("")
    lines += paired_markdown(diffs or [], paired_metric)
    labels = run_labels(runs)
    lines += degeneration_lines(runs, labels)
    lines += knowledge_split_lines(runs, labels, paired_metric)
    lines += ["## Runs", "", "| method | dataset | n | model | k | pool | LLM calls/q | "
              "prompt tok/q | completion tok/q | s/q | cached calls | fallbacks/q | "
              "NaN (judge failed) | other metrics |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r, label in zip(runs, run_labels(runs)):
        c = r["config"]
        other = ", ".join(f"{k} {v:.3f}" for k, v in sorted(r["mean"].items())
                          if k not in HEADLINE)
        lines.append(
            f"| {label} | {c['dataset']} | {r['n']} | {c['model']} | {c['k']} | "
            f"{c['pool']} | {r['tokens']['llm_calls']:.1f} | {r['tokens']['prompt_tokens']:.0f} "
            f"| {r['tokens']['completion_tokens']:.0f} | {r['latency_s']:.1f} | "
            f"{r['cached_share'] * 100:.0f}% | {r['fallbacks']:.1f} | {nan_text(r)} | "
            f"{other} |")
    own = [label for r, label in zip(runs, run_labels(runs))
           if "quality" in r["config"].get("judges", [])
           and r["config"].get("judge_model") == r["config"].get("model")]
    if own:
        lines += ["", f"Note: the quality judge of {', '.join(own)} is the answering model "
                      "itself; its scores lean towards its own pages (the paper judges with "
                      "another model)."]
    lines += ["", "Run directories and configurations:", ""]
    lines += [f"- `{r['dir']}`: {json.dumps(r['config'], sort_keys=True)}" for r in runs]
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p}]({p})" for p in plots]
    return "\n".join(lines) + "\n"


def nan_text(run: dict[str, Any]) -> str:
    """``context_recall 3/50, …``: the questions whose judge gave no score, or ``–``."""
    return ", ".join(f"{k} {v}/{run['n']}" for k, v in sorted(run["nan"].items()) if v) or "–"


def make_plots(runs: list[dict[str, Any]], out_dir: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    labels = [f"{r['config']['method']}\n{r['config']['dataset']}" for r in runs]

    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(runs)), 4))
    width = 0.8 / len(HEADLINE)
    for i, metric in enumerate(HEADLINE):
        ax.bar([x + i * width for x in range(len(runs))],
               [r["mean"].get(metric, 0) * 100 for r in runs], width, label=metric)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(runs))], labels, fontsize=8)
    ax.set_ylabel("score (%)")
    ax.set_title("Score per method and dataset")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "scores.png", dpi=110)
    plt.close(fig)
    names.append("scores.png")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(max(8, 2 * len(runs)), 4))
    ax1.bar(range(len(runs)), [r["tokens"]["prompt_tokens"] for r in runs], label="prompt")
    ax1.bar(range(len(runs)), [r["tokens"]["completion_tokens"] for r in runs],
            bottom=[r["tokens"]["prompt_tokens"] for r in runs], label="completion")
    ax1.set_xticks(range(len(runs)), labels, fontsize=8)
    ax1.set_title("Tokens per question")
    ax1.legend()
    ax2.bar(range(len(runs)), [r["latency_s"] for r in runs], color="tab:green")
    ax2.set_xticks(range(len(runs)), labels, fontsize=8)
    ax2.set_title("Seconds per question")
    fig.tight_layout()
    fig.savefig(out_dir / "cost.png", dpi=110)
    plt.close(fig)
    names.append("cost.png")

    fig, ax = plt.subplots(figsize=(6, 4))
    for r, label in zip(runs, labels):
        xs = list(r["by_rounds"])
        ax.plot(xs, [r["by_rounds"][x] * 100 for x in xs], marker="o",
                label=label.replace("\n", " / "))
    ax.set_xlabel("retrieval rounds (iterations)")
    ax.set_ylabel("Cover-EM (%)")
    ax.set_title("Score by number of iterations")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / "by_iteration.png", dpi=110)
    plt.close(fig)
    names.append("by_iteration.png")
    return names


def write_report(run_dirs: list[Path], out_dir: Path, *, plots: bool = True,
                 metric: str = "cover_em", baseline: str | None = None,
                 runs: list[dict[str, Any]] | None = None,
                 diffs: list[tuple[str, PairedDifference]] | None = None) -> dict[str, Path]:
    """report.md/.html (and plots) of ``run_dirs``; the paired differences are on ``metric``
    (against ``baseline`` when given). ``runs``/``diffs``: already loaded / computed."""
    runs = runs if runs is not None else [load_run(d) for d in run_dirs]
    if diffs is None:
        diffs = paired(runs, metric, baseline=baseline)
    out_dir.mkdir(parents=True, exist_ok=True)
    names = make_plots(runs, out_dir) if plots else []
    md = markdown(runs, names, diffs, metric)
    (out_dir / "report.md").write_text(md, encoding="utf-8")
    body = md_to_html(md)
    (out_dir / "report.html").write_text(
        "<!doctype html><meta charset='utf-8'><title>quaderno report</title>"
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}</style>"
        + body, encoding="utf-8")
    return {"markdown": out_dir / "report.md", "html": out_dir / "report.html"}


def md_to_html(md: str) -> str:
    """The small Markdown subset our report uses: headings, tables, lists, images."""
    out, in_table = [], False
    for line in md.splitlines():
        if line.startswith("|"):
            cells = [html.escape(c.strip()) for c in line.strip("|").split("|")]
            if set("".join(cells)) <= set("-"):
                continue
            tag = "th" if not in_table else "td"
            if not in_table:
                out.append("<table>")
                in_table = True
            out.append("<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>")
            continue
        if in_table:
            out.append("</table>")
            in_table = False
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{html.escape(line.lstrip('#').strip())}</h{level}>")
        elif line.startswith("![") and "](" in line:
            src = line[line.index("](") + 2:-1]
            out.append(f"<p><img src='{html.escape(src)}' style='max-width:100%'></p>")
        elif line.startswith("- "):
            out.append(f"<li>{html.escape(line[2:])}</li>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    if in_table:
        out.append("</table>")
    return "\n".join(out)
