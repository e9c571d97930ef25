"""Full-text candidates for keepui's BM25 channel: tantivy vs bm25s, on SciFact and at 100k docs.

Measures, for each library with English stemming and stop words:
  * nDCG@10 and Recall@100 on BEIR SciFact (title + text per doc, the 300 test queries);
  * index build time for SciFact and for 100k synthetic ~60-word docs;
  * query latency p50/p95 (top 100) at 100k;
  * the cost one put adds: tantivy adds the doc and commits; bm25s has no incremental
    update, so its cost is a rebuild of the whole index.

bm25s and PyStemmer are keepui dependencies; tantivy is measured only when installed
(.venv/bin/pip install tantivy), and skipped with a note otherwise.
Run: .venv/bin/python benchmarks/bench_bm25.py [--quick]   (reads ../shared/data/beir/scifact)
Writes benchmarks/results/bench_bm25.json.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

SCIFACT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "beir" / "scifact"
RESULTS = Path(__file__).resolve().parent / "results"


def load_scifact() -> tuple[list[tuple[str, str]], dict[str, str], dict[str, dict[str, int]]]:
    corpus = []
    for line in (SCIFACT / "corpus.jsonl").open():
        row = json.loads(line)
        corpus.append((row["_id"], f"{row.get('title', '')}\n{row['text']}"))
    queries = {}
    for line in (SCIFACT / "queries.jsonl").open():
        row = json.loads(line)
        queries[row["_id"]] = row["text"]
    qrels: dict[str, dict[str, int]] = {}
    for line in list((SCIFACT / "qrels" / "test.tsv").open())[1:]:
        qid, did, score = line.split("\t")
        qrels.setdefault(qid, {})[did] = int(score)
    return corpus, {q: t for q, t in queries.items() if q in qrels}, qrels


def ndcg10(ranked: list[str], rel: dict[str, int]) -> float:
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(rel.values(), reverse=True)[:10]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall100(ranked: list[str], rel: dict[str, int]) -> float:
    good = {d for d, r in rel.items() if r > 0}
    return len(good & set(ranked[:100])) / len(good) if good else 0.0


class Tantivy:
    """tantivy with simple tokens, lower case, English stop words and the Snowball stemmer."""

    name = "tantivy"

    def __init__(self, path: Path) -> None:
        import tantivy

        self.t = tantivy
        sb = tantivy.SchemaBuilder()
        sb.add_integer_field("key", stored=True, indexed=True, fast=True)
        sb.add_text_field("body", stored=False, tokenizer_name="en_keepui", index_option="freq")
        path.mkdir(parents=True, exist_ok=True)
        self.index = tantivy.Index(sb.build(), path=str(path))
        analyzer = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stopword("english"))
            .filter(tantivy.Filter.stemmer("english"))
            .build()
        )
        self.index.register_tokenizer("en_keepui", analyzer)

    def build(self, docs: list[str]) -> None:
        writer = self.index.writer(heap_size=128_000_000, num_threads=2)
        for i, text in enumerate(docs):
            writer.add_document(self.t.Document(key=i, body=text))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()

    def add_one(self, key: int, text: str) -> None:
        writer = self.index.writer(heap_size=15_000_000, num_threads=1)
        writer.add_document(self.t.Document(key=key, body=text))
        writer.commit()
        writer.wait_merging_threads()

    def search(self, query: str, k: int) -> list[int]:
        searcher = self.index.searcher()
        q = self.index.parse_query_lenient(query, ["body"])[0]
        hits = searcher.search(q, k).hits
        return [searcher.doc(addr)["key"][0] for _, addr in hits]


class BM25S:
    """bm25s (k1 0.9, b 0.4) with PyStemmer's English stemmer and English stop words."""

    name = "bm25s"

    def __init__(self, path: Path) -> None:
        import bm25s
        import Stemmer

        self.bm25s = bm25s
        self.stemmer = Stemmer.Stemmer("english")
        self.docs: list[str] = []

    def build(self, docs: list[str]) -> None:
        self.docs = list(docs)
        tokens = self.bm25s.tokenize(
            self.docs, stopwords="en", stemmer=self.stemmer, show_progress=False
        )
        self.model = self.bm25s.BM25(k1=0.9, b=0.4)
        self.model.index(tokens, show_progress=False)

    def add_one(self, key: int, text: str) -> None:
        self.build([*self.docs, text])

    def search(self, query: str, k: int) -> list[int]:
        q = self.bm25s.tokenize([query], stopwords="en", stemmer=self.stemmer, show_progress=False)
        ids, _ = self.model.retrieve(q, k=min(k, len(self.docs)), show_progress=False)
        return [int(i) for i in ids[0]]


def synthetic(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    vocab = [
        f"{a}{b}"
        for a in (
            "pro",
            "cell",
            "gen",
            "neu",
            "imm",
            "vir",
            "cyt",
            "met",
            "lip",
            "card",
            "hep",
            "ren",
            "oste",
            "derm",
            "onc",
            "ang",
        )
        for b in (
            "tein",
            "ase",
            "ome",
            "ine",
            "ide",
            "ogen",
            "itis",
            "osis",
            "ation",
            "ology",
            "ular",
            "al",
            "ic",
            "ist",
            "ment",
            "ure",
            "ity",
            "ous",
        )
    ]
    common = [
        "the",
        "of",
        "and",
        "in",
        "to",
        "a",
        "with",
        "for",
        "is",
        "was",
        "that",
        "by",
        "on",
        "were",
        "as",
        "from",
        "at",
        "be",
        "this",
    ]
    return [
        " ".join(rng.choice(vocab) if rng.random() < 0.6 else rng.choice(common) for _ in range(60))
        for _ in range(n)
    ]


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="20k synthetic docs instead of 100k")
    args = ap.parse_args()
    if not SCIFACT.exists():
        sys.exit(f"skipped: {SCIFACT} is absent")
    corpus, queries, qrels = load_scifact()
    ids = [d for d, _ in corpus]
    texts = [t for _, t in corpus]
    big = synthetic(20_000 if args.quick else 100_000)
    figures: dict[str, float] = {}
    engines: list[type] = [BM25S]
    try:
        import tantivy  # noqa: F401

        engines.insert(0, Tantivy)
    except ImportError:
        print("note: tantivy is not installed; measuring bm25s only")
    for cls in engines:
        tmp = Path(tempfile.mkdtemp())
        try:
            eng = cls(tmp / "sci")
            t0 = time.perf_counter()
            eng.build(texts)
            figures[f"{cls.name}_scifact_build_s"] = time.perf_counter() - t0
            runs = {q: [ids[i] for i in eng.search(text, 100)] for q, text in queries.items()}
            figures[f"{cls.name}_scifact_ndcg10"] = statistics.mean(
                ndcg10(runs[q], qrels[q]) for q in queries
            )
            figures[f"{cls.name}_scifact_recall100"] = statistics.mean(
                recall100(runs[q], qrels[q]) for q in queries
            )
            eng = cls(tmp / "big")
            t0 = time.perf_counter()
            eng.build(big)
            figures[f"{cls.name}_{len(big) // 1000}k_build_s"] = time.perf_counter() - t0
            lat = []
            rng = random.Random(11)
            probes = [" ".join(rng.sample(doc.split(), 5)) for doc in rng.sample(big, 200)]
            for q in probes:
                t0 = time.perf_counter()
                eng.search(q, 100)
                lat.append((time.perf_counter() - t0) * 1000)
            figures[f"{cls.name}_{len(big) // 1000}k_query_p50_ms"] = pct(lat, 50)
            figures[f"{cls.name}_{len(big) // 1000}k_query_p95_ms"] = pct(lat, 95)
            cost = []
            for i in range(3 if cls is BM25S else 20):
                t0 = time.perf_counter()
                eng.add_one(len(big) + i, texts[i])
                cost.append((time.perf_counter() - t0) * 1000)
            figures[f"{cls.name}_{len(big) // 1000}k_one_put_ms"] = statistics.median(cost)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'figure':40s} {'value':>10s}")
    for key, value in figures.items():
        print(f"{key:40s} {value:10.4f}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_bm25.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
