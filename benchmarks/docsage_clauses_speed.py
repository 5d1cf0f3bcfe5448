"""How clauses() (docsage/ended.py) grows with the text: target linear.

    .venv/bin/python benchmarks/docsage_clauses_speed.py [--sizes 1000 2000 4000 8000]

Every DocSage read-time repair that reads sentences (ended links, denied membership, a
member keyed by its group) splits its chunk with :func:`clauses`. A text of initials only
("J. J. J. ...") is its worst case: every piece ends in an initial, is mended onto the
clause before, and, written the plain regex way, searched the whole clause so far and the
whole text again (0.5 s at 1,000 initials, 6.8 s at 4,000 on this machine, 2026-11-28).
The review of 3846eef found the other worst case: initials each before a different word
("J. Waaa J. Waab ..."), a roster's shape, 6 s at 4,000 when every (initial, word) was a
search of the whole text; the words written out are now indexed once. Its review found the
index's own worst case: a word with a word's end at every character ("S. Kel. Zz a-a-a-..."),
each of whose prefixes was kept whole (0.5 GB at 32,000 characters); words of up to 64
characters are kept whole now, and a longer one by its hash (searched for instead, a text
of long words after initials took 21 s at 276,000 characters: the review of e67b013).
Printed per size: seconds for the run of initials, for initials before distinct words, for
initials before distinct words of 66 characters, and for as many words of ordinary
sentences, and the ratio to the size before (about 2 when linear, 4 when quadratic); then
the peak memory (tracemalloc) of splitting the text with one word of twice the size's
characters, each a word's end.
"""

from __future__ import annotations

import argparse
import itertools
import string
import timeit
import tracemalloc

from quaderno.methods.docsage.clauses import clauses

SENTENCE = "Skoustil Kelskyrn (S. Kelskyrn) left the DMC in 2005; J. R. Tolkien joined it. "


def distinct_words(n: int) -> str:
    """``n`` initials, each before a word of its own ("J. Waaa J. Waab ...")."""
    words = ("W" + "".join(t) for t in itertools.product(string.ascii_lowercase, repeat=4))
    return " ".join(f"J. {w}" for w in itertools.islice(words, n))


def long_words(n: int) -> str:
    """``n`` initials, each before a word of its own longer than the index keeps whole."""
    return " ".join(f"J. W{i:05d}" + "x" * 60 for i in range(n))


def ends_everywhere(n: int) -> str:
    """An initial before a capital, then a word of ``2 n + 1`` characters with a word's
    end after each ("a-a-a-...")."""
    return "S. Kelskyrn left. Zz " + "a-" * n + "a"


def peak_mib(text: str) -> float:
    """The most memory (MiB) that splitting ``text`` into clauses held at once."""
    tracemalloc.start()
    try:
        clauses(text)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def timings(sizes: list[int], repeat: int = 3) -> list[tuple[int, ...]]:
    """(size, best seconds over ``repeat`` for ``size`` initials, for ``size`` initials
    before distinct words, before distinct long words, for a text of about ``size`` words
    of sentences) per size."""
    out = []
    for n in sizes:
        texts = ("J. " * n, distinct_words(n), long_words(n), SENTENCE * max(1, n // 12))
        out.append((n, *(min(timeit.repeat(lambda t=text: clauses(t), number=1,
                                            repeat=repeat)) for text in texts)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    args = ap.parse_args()
    rows = timings(sorted(args.sizes))
    print("| size | initials s | ratio | before distinct words s | ratio | before long words s "
          "| ratio | sentences s | ratio |\n|---|---|---|---|---|---|---|---|---|")
    for i, (n, *secs) in enumerate(rows):
        cells = [f"{t:.4f} | " + (f"{t / rows[i - 1][j + 1]:.1f}" if i else "-")
                 for j, t in enumerate(secs)]
        print(f"| {n} | {' | '.join(cells)} |")
    print("\n| size | word's characters | peak MiB | ratio |\n|---|---|---|---|")
    peaks = [peak_mib(ends_everywhere(n)) for n in sorted(args.sizes)]
    for i, (n, mib) in enumerate(zip(sorted(args.sizes), peaks)):
        print(f"| {n} | {2 * n + 1} | {mib:.2f} | "
              + (f"{mib / peaks[i - 1]:.1f} |" if i else "- |"))


if __name__ == "__main__":
    main()
