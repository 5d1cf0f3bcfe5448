"""The DocSage benchmark report: accuracy per category and bin, and cost per question and per
extracted tuple, for every run of ``benchmarks/docsage_runs.sh``.

    .venv/bin/python benchmarks/docsage_report.py benchmarks/results/docsage-synth-measuring \
        /tmp/quaderno-docsage/collections > report.md

Run directories are named ``<config>-<bin>``; each question's category and type come from
its collection's ``questions.jsonl``, and each run's method and code version from its
``config.json`` (runs made while the code changed are told apart by it). Accuracy is the
synthetic benchmark's deterministic score (``synth_score``: numeric tolerance,
alias-normalized names, set F1, correlation label). The report opens with every
configuration run at one code version, when some version has two or more (the ablations
compared on the same code), then lists every run.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from quaderno.eval.records import read_results
from quaderno.eval.synth.templates import FRESH_TEMPLATES, TEST_TEMPLATES

CATEGORIES = ("Comparison", "Statistics", "Relationship")
BINS = ("set1", "set2", "set3")
# the paper's Table 3 order: DocSage, then its ablations, then the baselines
METHODS = ("docsage", "docsage-passive", "docsage-generic-schema", "docsage-no-logic-check",
           "docsage-no-clear", "docsage-no-sql", "docsage-no-extraction", "srag", "vanilla-llm")


def question_index(collections: Path) -> dict[str, dict]:
    """Every collection's questions by id, each marked ``heldout`` when its collection was
    rendered with the test template family alone (``quaderno synth make --templates 4``),
    ``fresh`` when with the fresh one alone (``--templates 5``)."""
    out: dict[str, dict] = {}
    where: dict[str, Path] = {}
    for qfile in sorted(collections.glob("*/questions.jsonl")):
        manifest = qfile.parent / "manifest.json"
        families = json.loads(manifest.read_text()).get("template_families", []) \
            if manifest.is_file() else []
        heldout = bool(families) and set(families) <= set(TEST_TEMPLATES)
        fresh = bool(families) and set(families) <= set(FRESH_TEMPLATES)
        for line in qfile.read_text().splitlines():
            q = json.loads(line)
            if q["id"] in where:
                # ids name family, bin and seed only: one seed rendered two ways
                sys.exit(f"question {q['id']} is in both {where[q['id']].name} and "
                         f"{qfile.parent.name}: a held-out collection needs a seed no "
                         "development collection of its family and bin has; move one away")
            where[q["id"]] = qfile.parent
            out[q["id"]] = q | {"heldout": heldout, "fresh": fresh}
    return out


def every_run(runs: dict[str, dict[str, list]], made: dict, questions: dict[str, dict],
              head: list[str]) -> None:
    """The table of every run: its method, code versions and accuracy per bin and category."""
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for config, by_bin in runs.items():
        cells, every = scores(by_bin, questions)
        methods = ", ".join(sorted({m for m, _ in made[config].values()}))
        codes = ", ".join(sorted({c for _, cs in made[config].values() for c in cs}))
        print(f"| {config} | {methods} | {codes} | " + " | ".join(cells) +
              f" | {mean(every)} | {len(every)} |")


def mean(xs: list[float]) -> str:
    return f"{sum(xs) / len(xs):.2f}" if xs else "–"


def count(xs: list[float]) -> str:
    """A mean of counts: a whole number as one, otherwise to one decimal."""
    if not xs:
        return "–"
    m = sum(xs) / len(xs)
    return f"{m:,.0f}" if m == int(m) else f"{m:,.1f}"


def per_tuple(recs: list) -> tuple[str, str, str, str]:
    """(tuples read, calls, tokens and seconds per tuple) over ``recs``, one bin's questions:
    their whole cost over the tuples their own extraction calls read (``details.tuples_new``),
    never over those the tuple store held. A record made before that count was kept
    (``None``) is estimated by the tuples CLEAR was given where the store held none of them
    (ASK's trial tuples left out, list cells split): the figures are then marked "≈"; with
    store hits it cannot be estimated, and the bin gets "–". "–" where no tuple was read,
    and seconds only where the response cache answered no call (a replay's seconds are no
    cost)."""
    known: list[int | None] = []
    for r in recs:
        n, clear = r.details.tuples_new, r.details.clear
        if n is None and not clear.get("cache_hits"):
            n = clear.get("tuples_extracted")
        known.append(n)
    estimated = any(r.details.tuples_new is None for r in recs)
    if any(n is None for n in known):
        return "–", "–", "–", "–"
    tuples = sum(n for n in known if n is not None)
    mark = "≈" if estimated else ""
    if not tuples:
        return f"{mark}0", "–", "–", "–"
    calls = sum(r.llm_calls for r in recs)
    tokens = sum(r.prompt_tokens + r.completion_tokens for r in recs)
    fresh = not any(r.cached_calls for r in recs)
    secs = f"{mark}{sum(r.latency_s for r in recs) / tuples:.1f}" if fresh else "–"
    return f"{mark}{tuples}", f"{mark}{calls / tuples:.1f}", f"{mark}{tokens / tuples:,.0f}", secs


def run_config(run: Path) -> tuple[str, list[str]]:
    """A run's method and code versions (the commit after the "+"; every version a resumed
    run was made with, the runner's ``code_versions``), "?" where not recorded."""
    path = run / "config.json"
    config = json.loads(path.read_text()) if path.is_file() else {}
    versions = config.get("code_versions") or [config.get("code_version") or "?"]
    return config.get("method") or "?", [(v or "?").rpartition("+")[2] for v in versions]


def scores(by_bin: dict[str, list], questions: dict[str, dict]) -> tuple[list[str], list[float]]:
    """The mean score per bin and category (the table's cells), and every score."""
    cells, every = [], []
    for b in BINS:
        for c in CATEGORIES:
            xs = [r.metrics.get("synth_score", 0.0) for r in by_bin.get(b, [])
                  if questions.get(r.id, {}).get("category") == c]
            cells.append(mean(xs))
        every += [r.metrics.get("synth_score", 0.0) for r in by_bin.get(b, [])]
    return cells, every


def one_commit(runs: dict[str, dict[str, list]],
               made: dict[str, dict[str, tuple[str, list[str]]]]
               ) -> tuple[str, dict[tuple[str, str], dict[str, list]]] | None:
    """The code version with the most (method, bin) pairs run at it, each run made wholly at
    it (not resumed across versions), and its runs' records by (method, configuration) and
    bin; None when no version has two methods. Five ablations on two bins compare more than
    six on one; ties go to the version with more questions answered."""
    at: dict[str, dict[tuple[str, str], dict[str, list]]] = defaultdict(
        lambda: defaultdict(dict))
    for config, by_bin in runs.items():
        for b, recs in by_bin.items():
            method, codes = made[config][b]
            if len(codes) == 1 and codes[0] != "?":
                at[codes[0]][(method, config)][b] = recs

    def methods(v: str) -> int:
        return len({m for m, _ in at[v]})

    def pairs(v: str) -> int:
        return len({(m, b) for (m, _), by_bin in at[v].items() for b in by_bin})
    if not at:
        return None
    best = max(sorted(at), key=lambda v: (pairs(v), sum(
        len(recs) for by_bin in at[v].values() for recs in by_bin.values())))
    return (best, at[best]) if methods(best) >= 2 else None


def main(out_dir: Path, collections: Path) -> None:
    questions = question_index(collections)
    runs: dict[str, dict[str, list]] = defaultdict(dict)
    made: dict[str, dict[str, tuple[str, list[str]]]] = defaultdict(dict)
    for run in sorted(p for p in out_dir.iterdir() if (p / "results.jsonl").is_file()):
        config, _, bin_ = run.name.rpartition("-")
        runs[config][bin_] = read_results(run / "results.jsonl")
        made[config][bin_] = run_config(run)
    print(f"# DocSage on the fictional multi-entity benchmark ({out_dir.name})\n")
    head = ["config", "method", "code", *(f"{b} {c[:4]}" for b in BINS for c in CATEGORIES),
            "all", "n"]

    def all_of(split: str) -> dict[str, dict[str, list]]:
        return {config: by_bin for config, by_bin in runs.items()
                if any(by_bin.values()) and all(questions.get(r.id, {}).get(split)
                                                for recs in by_bin.values() for r in recs)}
    fresh, held = all_of("fresh"), all_of("heldout")
    if fresh:
        print("## Fresh collections\n")
        print("Seed 2, rendered with the fresh template family alone (`quaderno synth make "
              "--templates 5`): written after the held-out family had been read for failure "
              "analysis, and never read while DocSage's rules were written. Accuracy "
              "(synth_score) per category and bin; n = questions answered.\n")
        every_run(fresh, made, questions, head)
    if held:
        print(("\n" if fresh else "") + "## Held-out collections\n")
        print("Seed 1, rendered with the test template family alone (`quaderno synth make "
              "--templates 4`): wording never read while DocSage's rules were written. "
              "Accuracy (synth_score) per category and bin; n = questions answered.\n")
        every_run(held, made, questions, head)
    if fresh or held:
        print("\n## Development collections\n")
        print("Seed 0, template families 0-3: the collections DocSage's rules were written "
              "against, question by question. Their accuracy is no held-out accuracy.\n")
    found = one_commit({c: b for c, b in runs.items() if c not in held and c not in fresh},
                       made)
    if found:
        version, by_method = found
        print(f"## Every configuration at one commit ({version})\n")
        print("The code version with the most configurations and bins run at it, each run "
              "made wholly at it: the ablations compared on the same code. Accuracy "
              "(synth_score) per category and bin; n = questions answered.\n")
        print("| " + " | ".join(["method", "config", *head[3:]]) + " |\n|"
              + "---|" * (len(head) - 1))
        rank = {m: i for i, m in enumerate(METHODS)}
        for method, config in sorted(by_method, key=lambda mc: (rank.get(mc[0], len(rank)),
                                                                 mc)):
            cells, every = scores(by_method[(method, config)], questions)
            print(f"| {method} | {config} | " + " | ".join(cells)
                  + f" | {mean(every)} | {len(every)} |")
        print("\n## Every run\n")
    print("Accuracy (synth_score) per category and bin; n = questions answered; the method "
          "and the code version each run was made with.\n")
    every_run({c: b for c, b in runs.items() if c not in held and c not in fresh}, made,
              questions, head)
    print("\nCost per question: LLM calls (and how many of them the response cache answered: "
          "configurations that share DocSage's schema and extraction with an earlier one re-use "
          "its replies, so their seconds are not a fresh cost), prompt and completion tokens, "
          "seconds (means per question); for DocSage also chunks read, tuples CLEAR was "
          "given, CLEAR's extraction calls (tuple-store misses) and tuple-store hits (means "
          "per question); then per extracted tuple, over the bin's questions together: the "
          "tuples their own extraction calls read (a sum; ASK's trials included, not those "
          "the store held), and their calls, tokens and seconds per such tuple. \"≈\": a "
          "run made before that count was kept, estimated by the tuples CLEAR was given where "
          "the store held none; seconds only for runs the response cache answered no call "
          "of.\n")
    print("| config | bin | calls | cached | prompt tok | compl tok | seconds | chunks | tuples | "
          "extract calls | store hits | read tuples (sum) | calls/tuple | tok/tuple | "
          "s/tuple |\n|"
          + "---|" * 15)
    for config, by_bin in runs.items():
        for b in BINS:
            recs = by_bin.get(b, [])
            if not recs:
                continue
            clear = [r.details.clear for r in recs
                     if r.details is not None and getattr(r.details, "kind", "") == "docsage"]
            chunks = [r.details.chunks_read for r in recs
                      if r.details is not None and getattr(r.details, "kind", "") == "docsage"]
            tuples = [c.get("tuples_extracted", 0) for c in clear]
            secs = sum(r.latency_s for r in recs)
            docsage = [r for r in recs
                       if r.details is not None and getattr(r.details, "kind", "") == "docsage"]
            read = " | ".join(per_tuple(docsage)) if docsage else "– | – | – | –"
            print(f"| {config} | {b} | {count([r.llm_calls for r in recs])} | "
                  f"{count([r.cached_calls for r in recs])} | "
                  f"{count([r.prompt_tokens for r in recs])} | "
                  f"{count([r.completion_tokens for r in recs])} | "
                  f"{secs / len(recs):.1f} | {count(chunks)} | "
                  f"{count(tuples)} | "
                  f"{count([c.get('llm_calls_extract', 0) for c in clear])} | "
                  f"{count([c.get('cache_hits', 0) for c in clear])} | {read} |")
    print("\nPer question (config, bin, type, score, answer vs gold):\n")
    for config, by_bin in runs.items():
        for b in BINS:
            for r in by_bin.get(b, []):
                q = questions.get(r.id, {})
                gold = (q.get("gold") or {}).get("answer", "")
                print(f"- {config} {b} {q.get('type', '?')}: {r.metrics.get('synth_score', 0):.2f}"
                      f" — {r.prediction[:80]!r} vs {str(gold)[:60]!r}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2] if len(sys.argv) > 2
                                 else "/tmp/quaderno-docsage/collections"))
