"""Scoring every gate of a bundle on answered questions, and the Markdown report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from quaderno.gate.decision import GateDecision
from quaderno.gate.labels import LabelFile, LabelRecord
from quaderno.gate.protocol import Gate
from quaderno.gate.scoring import GateScore, branch_table, question_rows, score_decisions


def evaluate(gates: Sequence[Gate], records: Sequence[LabelRecord]) -> dict[str, Any]:
    """Every gate's score, per-branch table and per-question rows on ``records``."""
    questions = [r.question for r in records]
    responses = [r.response for r in records]
    return evaluate_decisions(records, {
        gate.name: (gate.decide(questions, responses), gate.needs_response) for gate in gates})


def evaluate_decisions(records: Sequence[LabelRecord],
                       decided: Mapping[str, tuple[Sequence[GateDecision], bool]]
                       ) -> dict[str, Any]:
    """As :func:`evaluate`, from decisions already made (gate name → (decisions,
    needs_response)), e.g. out-of-fold decisions of a cross-validation."""
    out: dict[str, Any] = {"n": len(records), "labels": {
        j: sum(r.labelled() == j for r in records) for j in ("ir_better", "ir_worse", "same")},
        "gates": {}}
    for name, (decisions, needs_response) in decided.items():
        out["gates"][name] = {
            "score": score_decisions(records, decisions,
                                     needs_response=needs_response).model_dump(),
            "branches": branch_table(records, decisions),
            "questions": question_rows(records, decisions)}
    return out


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v * 100:.1f}"


def _num(v: float | None, digits: int = 2) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def markdown(result: dict[str, Any], *, labels: LabelFile | None = None,
             manifest: dict[str, Any] | None = None, extras: dict[str, Any] | None = None,
             split: str | None = None, detail: Sequence[str] = ("ccsk", "ccsk-rec")) -> str:
    """The report: the gates table, label balance, provenance, Fig. 4, per-branch tables and
    the per-question table of the gates in ``detail``."""
    lines = [f"# CCSK gates on {result['n']} {split or ''} questions".replace("  ", " "), ""]
    lab = result["labels"]
    lines += [f"Labels of these questions: {lab['ir_better']} ir_better, {lab['ir_worse']} "
              f"ir_worse, {lab['same']} same. ACC = cover-EM; gains are ACC points over never "
              "and always retrieving; LLM calls per question count the closed-book call only "
              "where a gate needs it (SN-only gates can decide before generating).", ""]
    lines += ["| gate | EM | F1 | ACC | retrieval rate | gain vs never | gain vs always | "
              "LLM calls/q | AUROC | bal. acc | fallback rate | novelty rate | gate ms/q (batch) |",
              "|" + "---|" * 13]
    for name, g in result["gates"].items():
        s = GateScore.model_validate(g["score"])
        lines.append(f"| {name} | {_pct(s.em)} | {_pct(s.f1)} | {_pct(s.acc)} | "
                     f"{_pct(s.retrieval_rate)} | {s.gain_over_never * 100:+.1f} | "
                     f"{s.gain_over_always * 100:+.1f} | {s.llm_calls:.2f} | {_num(s.auroc)} | "
                     f"{_num(s.balanced_accuracy)} | {_pct(s.fallback_rate)} | "
                     f"{_pct(s.novelty_rate)} | {s.mean_gate_ms:.1f} |")
    lines.append("")
    if labels is not None and labels.provenance is not None:
        p = labels.provenance
        lines += ["## Provenance of the labels", "",
                  f"- LLM: `{p.llm}`; retrieval answer: `{p.retrieval_method}` "
                  f"{p.method_options}; retriever `{p.retriever}`; prompt id `{p.prompt_id}`; "
                  f"label metric `{p.metric}`; RQM target embedder `{p.rqm_embedder}`, W "
                  f"{p.rqm_weights}", f"- note: {p.note}" if p.note else "", ""]
        counts: dict[str, dict[str, int]] = {}
        for r in labels.records:
            row = counts.setdefault(r.split or "-", {"ir_better": 0, "ir_worse": 0, "same": 0})
            row[r.labelled()] += 1
        lines += ["| split | n | ir_better | ir_worse | same |", "|---|---|---|---|---|"]
        lines += [f"| {k} | {sum(v.values())} | {v['ir_better']} | {v['ir_worse']} | "
                  f"{v['same']} |" for k, v in counts.items()]
        lines.append("")
    if manifest is not None:
        lines += ["## The trained gate", "",
                  f"- embedder `{manifest['embedder']}`; SN memory sources (source → LLM of "
                  f"its labels): {manifest.get('memory_sources')}",
                  f"- SN: k {manifest['sn']['k']}, θ_new {manifest['sn']['theta_new']}",
                  "- thresholds: " + "; ".join(
                      f"{n}: {c['thresholds']}" for n, c in manifest["fusions"].items())
                  + f"; {manifest['score_gates']}",
                  "- training: " + ", ".join(f"{k} {v}" for k, v in manifest["training"].items()
                                              if not isinstance(v, dict)), ""]
    for name in ("ccsk", "ccsk-rec"):
        fig = (extras or {}).get(f"fig4-{name}.json")
        if fig:
            lines += [f"### Fig. 4 protocol on val, {name}", "",
                      "| setting | τ_pred | τ_conf | τ_single | val ACC | retrieval rate | "
                      "fallback rate |", "|---|---|---|---|---|---|---|"]
            for setting, v in fig.items():
                b, row = v["best"], v["val"]
                lines.append(f"| {setting} | {b['tau_pred']} | {b['tau_conf']} | "
                             f"{b['tau_single']} | {_pct(row['acc'])} | "
                             f"{_pct(row['retrieval_rate'])} | {_pct(row['fallback_rate'])} |")
            lines.append("")
    for name in detail:
        g = result["gates"].get(name)
        if g is None:
            continue
        lines += [f"## {name}: where each branch of Eq. 7 sent the questions", "",
                  "Retrieved: ir_better = helped, ir_worse = hurt. Not retrieved: ir_better = "
                  "missed, ir_worse = harm avoided. ACC change = questions the retrieval answer "
                  "got right minus those it got wrong, among the retrieved.", "",
                  "| branch | retrieve | n | ir_better | ir_worse | same | ACC change |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {b['branch']} | {b['retrieve']} | {b['n']} | {b['ir_better']} | "
                  f"{b['ir_worse']} | {b['same']} | {b['acc_change']:+d} |" for b in g["branches"]]
        lines += ["", f"<details><summary>{name}: every question</summary>", "",
                  "| question | gold | label | branch | retrieve | F_SN | F_RQM | p | novelty | "
                  "closed-book | retrieval | ACC |", "|" + "---|" * 12]
        for q in g["questions"]:
            cells = [q["question"], q["gold"], q["label"], q["branch"], q["retrieve"], q["f_sn"],
                     q["f_rqm"], q["p"], q["novelty"], q["closed_book"], q["retrieval"],
                     int(q["acc_picked"])]
            lines.append("| " + " | ".join(str(c).replace("|", "/").replace("\n", " ")
                                           for c in cells) + " |")
        lines += ["", "</details>", ""]
    return "\n".join(lines)
