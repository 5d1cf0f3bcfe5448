"""What running model-written SQL in a child process costs DocSage per question: build a
question's sandbox (a few hundred rows), run a few gate-checked queries and close it, with the
child process (the default) and in process (``isolate=False``), and print the seconds of each
and their ratio.

    .venv/bin/python benchmarks/docsage_sandbox_overhead.py [--questions 20] [--rows 600]
"""

from __future__ import annotations

import argparse
import statistics
import time

from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.schema import Column, Schema, Table

SCHEMA = Schema(tables=[Table(name="company", primary_key=["name"], columns=[
    Column(name="name"), Column(name="founded", type="INT"), Column(name="staff", type="INT"),
    Column(name="city")])])
QUERIES = ["SELECT name FROM company ORDER BY staff DESC LIMIT 1",
           "SELECT avg(staff) AS mean_staff FROM company WHERE founded > 1950",
           "SELECT city, count(*) AS n FROM company GROUP BY city ORDER BY n DESC LIMIT 5"]


def question(rows: list[Row], isolate: bool) -> float:
    """Seconds to build one sandbox, run :data:`QUERIES` and close it."""
    start = time.perf_counter()
    with SQLSandbox(SCHEMA, rows, isolate=isolate) as sb:
        for sql in QUERIES:
            sb.run(sql)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--rows", type=int, default=600)
    args = ap.parse_args()
    rows = [Row(table="company", values={"name": f"c{i}", "founded": 1900 + i % 120,
                                         "staff": i * 7 % 5000, "city": f"t{i % 30}"},
                provenance=Provenance(chunk_id=f"d{i}#0")) for i in range(args.rows)]
    question(rows, True)   # warm imports and caches
    times = {isolate: [question(rows, isolate) for _ in range(args.questions)]
             for isolate in (False, True)}
    inproc, child = (statistics.median(times[k]) for k in (False, True))
    print(f"# sandbox per question ({args.rows} rows, {len(QUERIES)} queries, median of "
          f"{args.questions})\n"
          f"in process: {inproc * 1000:.0f} ms\n"
          f"child process: {child * 1000:.0f} ms\n"
          f"ratio child / in process: {child / inproc:.2f}\n"
          f"added per question: {(child - inproc) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
