"""`keepui eval`: BEIR-format retrieval evaluation in a scratch store, scored with trec_eval."""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keepui_engine import interrupts
from keepui_engine.errors import Interrupted, UsageError
from keepui_engine.types import PutSpec

MODES = ("dense", "bm25", "hybrid")
DEPTH = 100
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class EvalResult:
    """Scores of each mode, overall and per query.

    Attributes:
        store: The scratch store the corpus was ingested into.
        docs: Documents in the corpus.
        queries: Queries with judgements.
        modes: mode -> {"ndcg@10", "recall@100", "mrr@10", "query_ms" (mean), "query_p50_ms",
            "query_p95_ms"} (find latency, the query's embedding included).
        per_query: mode -> query id -> {"ndcg@10", "recall@100", "mrr@10"}.
        ingest_s: Seconds spent ingesting (0 when the store was reused).
        runs: mode -> query id -> ranked (doc id, score), best first, at most 100.
    """

    store: str
    docs: int
    queries: int
    modes: dict[str, dict[str, float]]
    per_query: dict[str, dict[str, dict[str, float]]]
    ingest_s: float
    runs: dict[str, dict[str, list[tuple[str, float]]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, without the ranked lists."""
        return {
            "store": self.store,
            "docs": self.docs,
            "queries": self.queries,
            "modes": self.modes,
            "per_query": self.per_query,
            "ingest_s": self.ingest_s,
        }


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}. Check the path.") from exc
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError:
                raise UsageError(
                    f"{path}:{n} is not a JSON object (BEIR files hold one JSON object per line)."
                ) from None
    return rows


def load_beir(
    corpus: Path, queries: Path, qrels: Path
) -> tuple[list[tuple[str, str]], dict[str, str], dict[str, dict[str, int]]]:
    """(docs as (id, title + text), query texts, judgements) of the judged queries."""
    docs = []
    for row in _jsonl(corpus):
        if "_id" not in row:
            raise UsageError(f"{corpus}: a row has no `_id`; is this a BEIR corpus.jsonl?")
        text = "\n".join(p for p in (row.get("title", ""), row.get("text", "")) if p)
        docs.append((str(row["_id"]), text or str(row["_id"])))
    texts = {str(r["_id"]): str(r.get("text", "")) for r in _jsonl(queries) if "_id" in r}
    judged: dict[str, dict[str, int]] = {}
    try:
        lines = qrels.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read {qrels}: {exc.strerror}. Check the path.") from exc
    for n, line in enumerate(lines, 1):
        parts = line.split()
        if not parts or (n == 1 and not parts[-1].lstrip("-").isdigit()):
            continue
        if len(parts) not in (3, 4):
            raise UsageError(f"{qrels}:{n}: expected `query-id corpus-id score`.")
        judged.setdefault(parts[0], {})[parts[-2]] = int(parts[-1])
    missing = [q for q in judged if q not in texts]
    if len(missing) == len(judged):
        raise UsageError(f"none of the {len(judged)} judged queries in {qrels} is in {queries}.")
    return docs, {q: texts[q] for q in judged if q in texts}, judged


def ndcg_at(ranked: list[str], rel: dict[str, int], k: int = 10) -> float:
    """nDCG@k with graded gains (trec_eval's ndcg_cut)."""
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((r for r in rel.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], rel: dict[str, int], k: int = 100) -> float:
    """Share of relevant documents in the top k."""
    good = {d for d, r in rel.items() if r > 0}
    return len(good & set(ranked[:k])) / len(good) if good else 0.0


def mrr_at(ranked: list[str], rel: dict[str, int], k: int = 10) -> float:
    """Reciprocal rank of the first relevant document in the top k."""
    for i, d in enumerate(ranked[:k]):
        if rel.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def monotone(hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Scores nudged to strictly decrease down the list.

    trec_eval orders a run by score and breaks ties by document id, not by the rank the system
    gave; RRF produces many exact ties, so without this the evaluated order would not be ours.
    The step is a millionth of the score, well above single precision (pytrec_eval compares
    scores as 32-bit floats).
    """
    out: list[tuple[str, float]] = []
    for doc, score in hits:
        if out and score >= out[-1][1] * (1 - 1e-6):
            score = out[-1][1] - max(abs(out[-1][1]) * 1e-6, 1e-12)
        out.append((doc, float(score)))
    return out


def trec_scores(
    run: dict[str, list[tuple[str, float]]], qrels: dict[str, dict[str, int]]
) -> dict[str, dict[str, float]]:
    """Per-query nDCG@10, Recall@100 and MRR@10 computed by trec_eval (pytrec_eval)."""
    import pytrec_eval

    judged = {q: qrels[q] for q in run}
    full = {q: dict(monotone(hits)) for q, hits in run.items()}
    top10 = {q: dict(monotone(hits[:10])) for q, hits in run.items()}
    main = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "recall.100"}).evaluate(full)
    rr = pytrec_eval.RelevanceEvaluator(judged, {"recip_rank"}).evaluate(top10)
    none = {"ndcg_cut_10": 0.0, "recall_100": 0.0, "recip_rank": 0.0}  # an empty run scores 0
    return {
        q: {
            "ndcg@10": main.get(q, none)["ndcg_cut_10"],
            "recall@100": main.get(q, none)["recall_100"],
            "mrr@10": rr.get(q, none)["recip_rank"],
        }
        for q in run
    }


def fingerprint(corpus: Path, model: str) -> str:
    """A key for reusing a scratch store built from the same corpus and model."""
    digest = hashlib.sha256(model.encode())
    with corpus.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def scratch_store(corpus: Path, model: str) -> Path:
    """Where the scratch store for this corpus and model lives."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "keepui" / "eval"
    return base / f"{corpus.stem}-{fingerprint(corpus, model)}"


def evaluate(
    corpus: Path,
    queries: Path,
    qrels: Path,
    *,
    modes: list[str] | None = None,
    store: Path | None = None,
    progress: Progress | None = None,
    batch: int = 256,
) -> EvalResult:
    """Ingest a BEIR corpus (or reuse a store built from it) and score every mode on it.

    Args:
        corpus: corpus.jsonl (`_id`, `title`, `text`).
        queries: queries.jsonl (`_id`, `text`).
        qrels: qrels tsv (`query-id corpus-id score`, optional header).
        modes: Modes to score (default: all three).
        store: Store directory to use instead of the cached scratch store.
        progress: Called with (phase, done, total) as ingest and queries advance.
        batch: Documents per put batch.

    Queries run through the store's own find (its keepui.toml: fusion, weights, decay) with
    the near-duplicate fold off: BEIR judges every document on its own.
    """
    from keepui_engine.api import open_workbench
    from keepui_engine.config import load_settings

    modes = list(modes or MODES)
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise UsageError(f"--mode {bad[0]!r}: choose from {', '.join(MODES)}.")
    docs, texts, judged = load_beir(corpus, queries, qrels)
    tell = progress or (lambda phase, done, total: None)
    if store is None:
        model = load_settings(None, create=False).embedding_model
        store = scratch_store(corpus, model)
    ingest_s = 0.0
    with open_workbench(store, own=True) as wb:
        marker = Path(store) / "eval.json"
        meta = {"corpus": fingerprint(corpus, wb.embedder.name), "docs": len(docs)}
        if not marker.exists() or json.loads(marker.read_text()) != meta:
            t0 = time.perf_counter()
            done = 0
            try:
                for start in range(0, len(docs), batch):
                    chunk = docs[start : start + batch]
                    specs = [PutSpec(text, id=doc_id, source="eval") for doc_id, text in chunk]
                    try:
                        wb.put_many(specs)
                    except interrupts.Deferred:
                        done += len(chunk)  # the batch's commit had begun and finished
                        raise
                    done += len(chunk)
                    tell("ingest", done, len(docs))
            except KeyboardInterrupt:
                raise Interrupted(
                    f"interrupted: {done} of {len(docs)} documents ingested into {store}",
                    hint="run the same command again to continue: stored documents are kept "
                    "and skipped",
                ) from None
            ingest_s = time.perf_counter() - t0
            marker.write_text(json.dumps(meta))
        runs: dict[str, dict[str, list[tuple[str, float]]]] = {}
        timing: dict[str, list[float]] = {}
        for mode in modes:
            runs[mode], timing[mode] = {}, []
            for n, (qid, text) in enumerate(texts.items(), 1):
                t0 = time.perf_counter()
                hits = wb.find(text, limit=DEPTH, mode=mode, dedup=False).hits
                timing[mode].append((time.perf_counter() - t0) * 1000)
                runs[mode][qid] = [(h.id, h.score) for h in hits]
                tell(mode, n, len(texts))
    per_query = {mode: trec_scores(runs[mode], judged) for mode in modes}
    summary = {
        mode: {
            **{
                m: sum(q[m] for q in per_query[mode].values()) / max(len(texts), 1)
                for m in ("ndcg@10", "recall@100", "mrr@10")
            },
            "query_ms": sum(timing[mode]) / max(len(timing[mode]), 1),
            "query_p50_ms": _percentile(timing[mode], 50),
            "query_p95_ms": _percentile(timing[mode], 95),
        }
        for mode in modes
    }
    return EvalResult(str(store), len(docs), len(texts), summary, per_query, ingest_s, runs)


def evaluate_judged(
    wb: Any, modes: list[str] | None = None, progress: Progress | None = None
) -> EvalResult:
    """Score every mode on the store's own judged queries, with the same trec_eval path.

    The store is searched as it is (its keepui.toml, the near-duplicate fold off, as for
    BEIR); per-query results are keyed by the query's text.

    Raises:
        UsageError: Bad mode, or no judgments yet.
    """
    modes = list(modes or MODES)
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise UsageError(f"--mode {bad[0]!r}: choose from {', '.join(MODES)}.")
    judged: dict[str, dict[str, int]] = {}
    for j in wb.judgments():
        judged.setdefault(j.query, {})[j.id] = j.grade
    if not judged:
        raise UsageError(
            "no judgments in this store yet: record some with keepui judge QUERY ID --grade N "
            "(or + and - on a hit in the workbench)."
        )
    tell = progress or (lambda phase, done, total: None)
    runs: dict[str, dict[str, list[tuple[str, float]]]] = {}
    timing: dict[str, list[float]] = {}
    with wb._session():
        for mode in modes:
            runs[mode], timing[mode] = {}, []
            for n, query in enumerate(judged, 1):
                t0 = time.perf_counter()
                hits = wb.find(query, limit=DEPTH, mode=mode, dedup=False).hits
                timing[mode].append((time.perf_counter() - t0) * 1000)
                runs[mode][query] = [(h.id, h.score) for h in hits]
                tell(mode, n, len(judged))
    per_query = {mode: trec_scores(runs[mode], judged) for mode in modes}
    summary = {
        mode: {
            **{
                m: sum(q[m] for q in per_query[mode].values()) / len(judged)
                for m in ("ndcg@10", "recall@100", "mrr@10")
            },
            "query_ms": sum(timing[mode]) / len(timing[mode]),
            "query_p50_ms": _percentile(timing[mode], 50),
            "query_p95_ms": _percentile(timing[mode], 95),
        }
        for mode in modes
    }
    return EvalResult(str(wb.store), wb.stats().items, len(judged), summary, per_query, 0.0, runs)


def _percentile(values: list[float], q: float) -> float:
    """The q-th percentile (linear interpolation), 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def write_runs(result: EvalResult, path: Path) -> list[Path]:
    """Write TREC run files (`qid Q0 docid rank score tag`), one per mode.

    With one mode the file is `path`; with several, the mode goes before the suffix
    (run.trec -> run.dense.trec).
    """
    written = []
    for mode, run in result.runs.items():
        target = (
            path if len(result.runs) == 1 else path.with_name(f"{path.stem}.{mode}{path.suffix}")
        )
        lines = [
            f"{qid} Q0 {doc} {rank} {score:.10f} keepui-{mode}"
            for qid, hits in run.items()
            for rank, (doc, score) in enumerate(monotone(hits), 1)
        ]
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(target)
    return written
