"""Retrieval benchmark: embedding throughput, index build, latency, recall, 1M-passage scale.

Run:  .venv/bin/python benchmarks/retrieval.py [--quick] [--embedder minilm]

Prints, in one run:
  1. embedding throughput of the chosen embedder on real paragraphs;
  2. index build time and peak memory (BM25 + dense flat, and HNSW) of the pooled HotpotQA corpus;
  3. query latency p50/p95 for BM25, dense flat, dense HNSW and hybrid;
  4. recall@2/5/10 of the supporting paragraphs of HotpotQA (300 dev, IRCoT) and MuSiQue (60 dev),
     ranking each question's own paragraph pool and one pooled corpus of all paragraphs;
  5. BM25 and HNSW latency on a synthetic 1M-passage corpus (target: each <= 5 ms p50).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_dir, latencies_ms, pct, peak_rss_mb, reset_peak_rss  # noqa: E402

from quaderno.corpus.chunk import Chunk  # noqa: E402
from quaderno.index.bm25 import BM25Index  # noqa: E402
from quaderno.index.hits import Hit, reciprocal_rank_fusion  # noqa: E402
from quaderno.index.kb_index import DenseConfig  # noqa: E402
from quaderno.index.retrievers import (BM25Retriever, DenseRetriever,  # noqa: E402
                                       HybridRetriever)
from quaderno.index.vectorstore import FaissVectorStore  # noqa: E402
from quaderno.workspace import Workspace  # noqa: E402

KS = (2, 5, 10)


class MemoEmbedder:
    """Wraps an embedder: each distinct text is embedded once; records the time spent."""

    def __init__(self, inner) -> None:
        self.inner, self.spec, self.dim = inner, inner.spec, inner.dim
        self.memo: dict[str, np.ndarray] = {}
        self.seconds, self.count = 0.0, 0

    def _get(self, texts, fn):
        todo = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if todo:
            t0 = time.perf_counter()
            for t, v in zip(todo, fn(todo)):
                self.memo[t] = v
            self.seconds += time.perf_counter() - t0
            self.count += len(todo)
        return np.stack([self.memo[t] for t in texts]) if texts else np.zeros((0, self.dim))

    def embed_documents(self, texts):
        return self._get(list(texts), self.inner.embed_documents)

    def embed_queries(self, texts):
        return self.inner.embed_queries(list(texts))


def load_questions(data: Path) -> dict[str, list[dict]]:
    """{dataset: [{question, paragraphs: [(title, text)], supporting: set(index)}]}"""
    hotpot = []
    for line in (data / "hotpotqa" / "hotpotqa_dev_ircot_300.jsonl").open():
        rec = json.loads(line)
        paras = [(c["title"], c["paragraph_text"]) for c in rec["contexts"]]
        sup = {i for i, c in enumerate(rec["contexts"]) if c["is_supporting"]}
        hotpot.append({"question": rec["question_text"], "paragraphs": paras, "supporting": sup})
    musique = []
    for rec in json.loads((data / "musique" / "musique_ans_dev_60.json").read_text()):
        paras = [(p["title"], p["paragraph_text"]) for p in rec["paragraphs"]]
        sup = {i for i, p in enumerate(rec["paragraphs"]) if p["is_supporting"]}
        musique.append({"question": rec["question"], "paragraphs": paras, "supporting": sup})
    return {"HotpotQA": hotpot, "MuSiQue": musique}


def para_id(title: str, text: str) -> str:
    return hashlib.md5(f"{title}\n{text}".encode()).hexdigest()[:16]


def recall(ranked: list[list[str]], gold: list[set[str]], k: int) -> float:
    return float(np.mean([len(set(r[:k]) & g) / len(g) for r, g in zip(ranked, gold) if g]))


def per_question_rankings(qs: list[dict], embedder: MemoEmbedder) -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {"bm25": [], "dense": [], "hybrid": []}
    for q in qs:
        ids = [para_id(*p) for p in q["paragraphs"]]
        texts = [f"{t}\n{x}" for t, x in q["paragraphs"]]
        bm25 = BM25Index()
        bm25.build(texts)
        _, pos = bm25.search([q["question"]], len(texts))
        b_rank = [ids[p] for p in pos[0] if p >= 0]
        b_rank += [i for i in ids if i not in b_rank]  # zero-score paragraphs rank last
        scores = embedder.embed_documents(texts) @ embedder.embed_queries([q["question"]])[0]
        d_rank = [ids[i] for i in np.argsort(-scores, kind="stable")]
        as_hits = [[Hit(chunk=Chunk(id=i, text="-"), score=0, rank=r, retriever=n)
                    for r, i in enumerate(rank, 1)] for n, rank in (("b", b_rank), ("d", d_rank))]
        out["bm25"].append(b_rank)
        out["dense"].append(d_rank)
        out["hybrid"].append([h.chunk.id for h in reciprocal_rank_fusion(as_hits, len(ids))])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--quick", action="store_true", help="100k synthetic passages instead of 1M")
    ap.add_argument("--synthetic-n", type=int, default=None)
    ap.add_argument("--skip-synthetic", action="store_true")
    args = ap.parse_args()
    n_synth = args.synthetic_n or (100_000 if args.quick else 1_000_000)
    data = data_dir()
    work = Path(tempfile.mkdtemp(prefix="quaderno-bench-"))
    ws = Workspace(work)
    print(f"# quaderno retrieval benchmark  (embedder {args.embedder}, workspace {work})\n")

    datasets = load_questions(data)
    embedder = MemoEmbedder(ws.embedder(args.embedder))

    # -- 1 + 2: build the pooled HotpotQA index, measuring embedding and build -------------
    hotpot = datasets["HotpotQA"]
    pool = {para_id(t, x): Chunk(id=para_id(t, x), text=x, title=t)
            for q in hotpot for t, x in q["paragraphs"]}
    ws.add_kb("hotpot-pool", pool.values(), max_words=None, dedup=False)
    reset_peak_rss()
    rss0 = peak_rss_mb()
    m = ws.build_index("hotpot-pool", embedder=embedder)
    flat_rss = peak_rss_mb()
    print("## 1. Embedding throughput")
    print(f"{embedder.spec}: {embedder.count} paragraphs in {embedder.seconds:.1f}s = "
          f"{embedder.count / embedder.seconds:.1f} paragraphs/s "
          f"(mean {np.mean([len(c.text.split()) for c in pool.values()]):.0f} words)")
    qtimes = latencies_ms(lambda q: embedder.embed_queries([q]),
                          [q["question"] for q in hotpot[:50]])
    print(f"query embedding: {pct(qtimes)}\n")
    reset_peak_rss()
    m_hnsw = ws.build_index("hotpot-pool", index="hnsw", bm25=False, embedder=embedder,
                            dense=DenseConfig(store="faiss-hnsw"))
    print("## 2. Index build (pooled HotpotQA corpus)")
    print(f"{len(pool)} paragraphs; BM25 {m['build']['bm25_s']:.2f}s; dense flat "
          f"{m['build']['dense_s']:.1f}s (embedding included); peak RSS {flat_rss:.0f} MB "
          f"(process before build {rss0:.0f} MB)")
    print(f"HNSW (M=32, efC=40) from cached embeddings: {m_hnsw['build']['dense_s']:.2f}s\n")

    # -- 3: latency -----------------------------------------------------------------------
    print("## 3. Query latency (pooled HotpotQA, k=10, 300 questions)")
    queries = [q["question"] for q in hotpot]
    flat_idx = ws.open_index("hotpot-pool", embedder=embedder)
    hnsw_idx = ws.open_index("hotpot-pool", index="hnsw", embedder=embedder)
    qvecs = {q: v for q, v in zip(queries, embedder.embed_queries(queries))}
    rows = [
        ("bm25 (search)", lambda q: flat_idx.bm25.search([q], 10)),
        ("dense flat (search)", lambda q: flat_idx.store.search(qvecs[q][None], 10)),
        ("dense hnsw (search)", lambda q: hnsw_idx.store.search(qvecs[q][None], 10)),
        ("bm25 retriever (end to end)", BM25Retriever(flat_idx).retrieve),
        ("dense retriever (embed + search)", DenseRetriever(flat_idx).retrieve),
        ("hybrid retriever (end to end)", HybridRetriever([BM25Retriever(flat_idx),
                                                            DenseRetriever(flat_idx)]).retrieve),
    ]
    for name, fn in rows:
        print(f"{name:34s} {pct(latencies_ms(fn, queries))}")
    print()

    # -- 4: recall ------------------------------------------------------------------------
    print("## 4. Recall of supporting paragraphs")
    print(f"{'dataset':9s} {'setting':15s} {'retriever':8s} " + " ".join(f"R@{k:<4d}" for k in KS))
    for name, qs in datasets.items():
        gold = [{para_id(*q["paragraphs"][i]) for i in q["supporting"]} for q in qs]
        for retr, ranked in per_question_rankings(qs, embedder).items():
            print(f"{name:9s} {'per-question':15s} {retr:8s} "
                  + " ".join(f"{recall(ranked, gold, k):.3f}" for k in KS))
        kb = "hotpot-pool" if name == "HotpotQA" else "musique-pool"
        if name != "HotpotQA":
            ws.add_kb(kb, {para_id(t, x): Chunk(id=para_id(t, x), text=x, title=t)
                           for q in qs for t, x in q["paragraphs"]}.values(),
                      max_words=None, dedup=False)
            ws.build_index(kb, embedder=embedder)
        size = len(ws.kb(kb))
        for mode in ("bm25", "dense", "hybrid"):
            r = ws.retriever(kb, mode=mode, embedder=embedder, cache=False)
            batch = r.retrieve_batch([q["question"] for q in qs], 10)
            ranked = [[h.chunk.id for h in hs] for hs in batch]
            print(f"{name:9s} {f'pooled ({size})':15s} {mode:8s} "
                  + " ".join(f"{recall(ranked, gold, k):.3f}" for k in KS))
    print()

    if not args.skip_synthetic:
        synthetic(n_synth)


def synthetic(n: int) -> None:
    print(f"## 5. Synthetic corpus of {n:,} passages (target: p50 <= 5 ms per query)")
    rng = np.random.default_rng(0)
    vocab_size = 50_000
    words = np.array([f"w{i}x" for i in range(vocab_size)])
    p = 1 / np.arange(1, vocab_size + 1) ** 1.05
    p /= p.sum()
    t0 = time.perf_counter()
    texts = []
    for start in range(0, n, 100_000):
        block = rng.choice(vocab_size, size=(min(100_000, n - start), 100), p=p)
        texts.extend(" ".join(words[row]) for row in block)
    print(f"generated 100-word Zipf passages over a {vocab_size:,}-word vocabulary in "
          f"{time.perf_counter() - t0:.0f}s")
    # queries: 6 words, not the most frequent ones (as after stop-word removal)
    queries = [" ".join(words[rng.choice(np.arange(100, vocab_size), 6, p=p[100:] / p[100:].sum())])
               for _ in range(300)]
    reset_peak_rss()
    bm25 = BM25Index(stem=False, stopwords=None)
    t0 = time.perf_counter()
    bm25.build(texts)
    print(f"BM25 build {time.perf_counter() - t0:.0f}s, peak RSS {peak_rss_mb():.0f} MB")
    del texts
    lat = latencies_ms(lambda q: bm25.search([q], 10), queries)
    print(f"{'BM25 (bm25s, ' + bm25._bm25.backend + ')':34s} {pct(lat)}")
    bm25 = None  # free the index before the vector part
    dim = 384
    vecs = rng.standard_normal((n, dim), dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    reset_peak_rss()
    store = FaissVectorStore(dim, kind="hnsw", hnsw_m=32, ef_construction=40, ef_search=64)
    t0 = time.perf_counter()
    for start in range(0, n, 50_000):
        store.add(vecs[start:start + 50_000])
    print(f"HNSW build (M=32, efC=40, dim {dim}) {time.perf_counter() - t0:.0f}s, "
          f"peak RSS {peak_rss_mb():.0f} MB")
    qv = rng.standard_normal((300, dim), dtype=np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    it = iter(range(10**9))
    hnsw = latencies_ms(lambda _: store.search(qv[next(it) % 300][None], 10), list(range(300)))
    print(f"{'HNSW efSearch=64 (search)':34s} {pct(hnsw)}")


if __name__ == "__main__":
    main()
