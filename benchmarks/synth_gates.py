"""Anti-triviality gates of the fictional DocSage benchmark (issue 11, item 7).

Run:  .venv/bin/python benchmarks/synth_gates.py [--seeds 0 1] [--per-type 5]
          [--results benchmarks/results_synth_gates.txt]

No LLM runs. Prints, per bin and over 6 families x 3 bins x seeds:
1. the oracle (gold tables read back from disk + each question's SQL): must be 1.000;
2. Statistics questions of Set2/Set3 answerable from one document: must be 0;
3. a regex extractor compiled from the renderer's templates of the train template families
   (0, 1) with the train domain families' attribute words, scored by running each
   question's SQL over the tables it extracts: on documents of the train families and
   train templates (the extractor works), and on held-out template families of held-out
   domain families (the gate: must be low);
4. the answer-prior floor: "yes" to every yes/no question and "no clear correlation" to
   every correlation question, nothing else (what guessing earns), and, for honesty, a
   regex compiled from the whole bank (every family, every template family) on the
   collections as they are normally rendered: what reading the generator's source buys;
5. the hardness knobs, averaged.

The closed-book LLM gate needs a model run and is not run here. Its command, for each
collection folder this script writes under --out:
    quaderno eval -d FOLDER/questions.jsonl --format synth -m vanilla-llm \\
        --measure synth_score --llm llama-cpp --limit 40
(`vanilla-llm` answers without retrieval; a score near the answer-prior floor passes.)
Pass --closed-book to print those commands for the folders written.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from quaderno.eval.synth import (BINS, FAMILIES, GENERATOR_VERSION, HELDOUT_TEMPLATES,
                                 TEST_FAMILIES, TRAIN_FAMILIES, TRAIN_TEMPLATES, make_collection,
                                 score, write_collection)
from quaderno.eval.synth.templates import ALL_TEMPLATES
from quaderno.eval.synth.gates import (oracle_score, regex_extractor, regex_score,
                                       single_doc_answerable)

KNOBS = ("entities_involved", "docs_per_entity", "alias_only_docs", "dated_conflicts",
         "corrections", "negated_mentions", "missing_cells", "single_doc_coverage")


def prior_floor(questions: list) -> float:
    guess = {"boolean": "yes", "correlation": "no clear correlation"}
    return statistics.mean(score(q.gold, guess.get(q.gold.kind, "")) for q in questions)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--per-type", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None, help="Keep the collections here")
    ap.add_argument("--results", type=Path,
                    default=Path(__file__).with_name("results_synth_gates.txt"))
    ap.add_argument("--closed-book", action="store_true",
                    help="Print the closed-book LLM commands (they are not run)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = args.out or Path(tempfile.mkdtemp(prefix="synth-gates-"))
    lines = [f"synthetic DocSage benchmark gates ({GENERATOR_VERSION}); seeds {args.seeds}, "
             f"{args.per_type} questions per type, train families {', '.join(TRAIN_FAMILIES)}"
             f", test families {', '.join(TEST_FAMILIES)}; train templates {TRAIN_TEMPLATES}, "
             f"held-out templates {HELDOUT_TEMPLATES}", ""]
    extractor = regex_extractor(TRAIN_FAMILIES, TRAIN_TEMPLATES)
    full_bank = regex_extractor(tuple(FAMILIES), ALL_TEMPLATES)  # knows the whole generator
    per_bin: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    knobs: dict[str, list[float]] = defaultdict(list)
    folders, n_q, n_docs, one_doc = [], 0, 0, 0
    types: dict[str, int] = defaultdict(int)
    for b in BINS:
        for fam in FAMILIES:
            for seed in args.seeds:
                col = make_collection(fam, b, seed, per_type=args.per_type)
                folder = write_collection(col, out)
                folders.append(folder)
                n_q, n_docs = n_q + len(col.questions), n_docs + len(col.documents)
                for q in col.questions:
                    types[q.type] += 1
                    for k in KNOBS:
                        knobs[k].append(float(q.knobs[k]))
                per_bin[b]["oracle"].append(oracle_score(folder))
                per_bin[b]["prior"].append(prior_floor(col.questions))
                per_bin[b]["regex_full_bank"].append(regex_score(col, full_bank))
                one_doc += len(single_doc_answerable(col.questions))
                train_side = fam in TRAIN_FAMILIES
                templates = TRAIN_TEMPLATES if train_side else HELDOUT_TEMPLATES
                held = make_collection(fam, b, seed, per_type=args.per_type,
                                       template_families=templates)
                key = "regex_seen" if train_side else "regex_heldout"
                per_bin[b][key].append(regex_score(held, extractor))
                if not train_side:  # held-out families, seen templates (vocabulary transfer)
                    seen_tpl = make_collection(fam, b, seed, per_type=args.per_type,
                                               template_families=TRAIN_TEMPLATES)
                    per_bin[b]["regex_test_fam_seen_tpl"].append(regex_score(seen_tpl,
                                                                             extractor))
    lines.append(f"collections {len(folders)}, documents {n_docs}, questions {n_q}; per type: "
                 + ", ".join(f"{t} {n}" for t, n in sorted(types.items())))
    lines.append("")
    header = (f"{'bin':6} {'oracle':>7} {'regex: train fam+tpl':>21} "
              f"{'regex: test fam, train tpl':>27} {'regex: test fam+held-out tpl (gate)':>36} "
              f"{'prior floor':>12} {'full-bank regex':>16}")
    lines.append(header)
    for b, m in per_bin.items():
        lines.append(f"{b:6} {statistics.mean(m['oracle']):7.3f} "
                     f"{statistics.mean(m['regex_seen']):21.3f} "
                     f"{statistics.mean(m['regex_test_fam_seen_tpl']):27.3f} "
                     f"{statistics.mean(m['regex_heldout']):36.3f} "
                     f"{statistics.mean(m['prior']):12.3f} "
                     f"{statistics.mean(m['regex_full_bank']):16.3f}")
    alls = {k: statistics.mean(v for m in per_bin.values() for v in m[k])
            for k in ("oracle", "regex_seen", "regex_test_fam_seen_tpl", "regex_heldout",
                      "prior", "regex_full_bank")}
    lines.append(f"{'all':6} {alls['oracle']:7.3f} {alls['regex_seen']:21.3f} "
                 f"{alls['regex_test_fam_seen_tpl']:27.3f} {alls['regex_heldout']:36.3f} "
                 f"{alls['prior']:12.3f} {alls['regex_full_bank']:16.3f}")
    lines.append("")
    lines.append(f"Set2/Set3 Statistics questions answerable from one document: {one_doc}")
    lines.append("hardness knobs (mean per question): " + ", ".join(
        f"{k} {statistics.mean(v):.2f}" for k, v in knobs.items()))
    gate_ok = alls["oracle"] == 1.0 and one_doc == 0 and alls["regex_heldout"] <= 0.2
    lines.append(f"gates: {'PASS' if gate_ok else 'FAIL'} (oracle = 1, no one-document "
                 "Statistics question in Set2/3, held-out regex <= 0.20); closed-book LLM: "
                 "not run (see the script's docstring)")
    lines.append(f"({time.perf_counter() - t0:.0f} s; collections under {out})")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    args.results.write_text(text.replace(str(out), "a temporary folder") if not args.out
                            else text, encoding="utf-8")
    if args.closed_book:
        for folder in folders:
            sys.stdout.write(f"quaderno eval -d {folder}/questions.jsonl --format synth "
                             f"-m vanilla-llm --measure synth_score --llm llama-cpp\n")
    if not gate_ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
