"""How clauses() (docsage/ended.py) grows with the text: target linear.

    .venv/bin/python benchmarks/docsage_clauses_speed.py [--sizes 1000 2000 4000 8000]

Every DocSage read-time repair that reads sentences (ended links, denied membership, a
member keyed by its group) splits its chunk with :func:`clauses`. A text of initials only
("J. J. J. ...") is its worst case: every piece ends in an initial, is mended onto the
clause before, and, written the plain regex way, searched the whole clause so far and the
whole text again (0.5 s at 1,000 initials, 6.8 s at 4,000 on this machine, 2026-11-28).
Printed per size: seconds for the run of initials and for as many words of ordinary
sentences, and the ratio to the size before (about 2 when linear, 4 when quadratic).
"""

from __future__ import annotations

import argparse
import time

from quaderno.methods.docsage.ended import clauses

SENTENCE = "Skoustil Kelskyrn (S. Kelskyrn) left the DMC in 2005; J. R. Tolkien joined it. "


def timings(sizes: list[int], repeat: int = 3) -> list[tuple[int, float, float]]:
    """(size, best seconds over ``repeat`` for ``size`` initials, the same for a text of
    about ``size`` words of sentences) per size."""
    out = []
    for n in sizes:
        texts = ("J. " * n, SENTENCE * max(1, n // 12))
        best = []
        for text in texts:
            runs = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                clauses(text)
                runs.append(time.perf_counter() - t0)
            best.append(min(runs))
        out.append((n, best[0], best[1]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    args = ap.parse_args()
    rows = timings(sorted(args.sizes))
    print("| size | initials s | ratio | sentences s | ratio |\n|---|---|---|---|---|")
    for i, (n, a, b) in enumerate(rows):
        ra = f"{a / rows[i - 1][1]:.1f}" if i else "-"
        rb = f"{b / rows[i - 1][2]:.1f}" if i else "-"
        print(f"| {n} | {a:.4f} | {ra} | {b:.4f} | {rb} |")


if __name__ == "__main__":
    main()
