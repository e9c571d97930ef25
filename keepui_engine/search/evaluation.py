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

from keepui_engine.core.errors import UsageError

MODES = ("dense", "bm25", "hybrid")
METRICS = ("ndcg@10", "recall@100", "mrr@10")
DEPTH = 100
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class EvalResult:
    """Scores of each mode, overall and per query, with how sure each figure is.

    Attributes:
        store: The scratch store the corpus was ingested into.
        docs: Documents in the corpus.
        queries: Queries with judgements.
        modes: mode -> {"ndcg@10", "recall@100", "mrr@10", "query_ms" (mean), "query_p50_ms",
            "query_p95_ms"} (find latency, the query's embedding included).
        per_query: mode -> query id -> {"ndcg@10", "recall@100", "mrr@10"}.
        ingest_s: Seconds spent ingesting (0 when the store was reused).
        runs: mode -> query id -> ranked (doc id, score), best first, at most 100.
        intervals: mode -> metric -> [low, high], the 95% bootstrap interval over queries.
        reference: The mode the others are compared with (`--compare`).
        compared: mode -> the paired comparison of its nDCG@10 with the reference's
            (`significance.Paired.to_dict()`); the reference itself is absent.
        identical_ids: "dropped" when a query's own id was taken out of its ranking (BEIR's
            default, ignore_identical_ids), "kept" when not, "" when not applicable.
    """

    store: str
    docs: int
    queries: int
    modes: dict[str, dict[str, float]]
    per_query: dict[str, dict[str, dict[str, float]]]
    ingest_s: float
    runs: dict[str, dict[str, list[tuple[str, float]]]] = field(default_factory=dict)
    intervals: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    reference: str = ""
    compared: dict[str, dict[str, float | int]] = field(default_factory=dict)
    identical_ids: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, without the ranked lists."""
        return {
            "store": self.store,
            "docs": self.docs,
            "queries": self.queries,
            "modes": self.modes,
            "intervals": self.intervals,
            "reference": self.reference,
            "compared": self.compared,
            "identical_ids": self.identical_ids,
            "per_query": self.per_query,
            "ingest_s": self.ingest_s,
        }

    def compared_with(self, reference: str) -> EvalResult:
        """This result with every other mode's nDCG@10 tested against `reference`'s.

        Raises:
            UsageError: `reference` was not scored.
        """
        from dataclasses import replace

        from keepui_engine.search.significance import paired_test

        if reference not in self.per_query:
            raise UsageError(
                f"--compare {reference!r}: it was not scored (scored: {', '.join(self.per_query)})."
            )
        base = self.per_query[reference]
        compared = {
            mode: paired_test(
                [table[q]["ndcg@10"] for q in base], [base[q]["ndcg@10"] for q in base]
            ).to_dict()
            for mode, table in self.per_query.items()
            if mode != reference
        }
        return replace(self, reference=reference, compared=compared)


def parse_modes(modes: list[str] | None, compare: str | None = None) -> tuple[list[str], str]:
    """The modes to score and the reference mode, checked.

    A mode is `dense`, `bm25`, `hybrid`, or `hybrid:FUSION` for one of find's fusions (e.g.
    `hybrid:rrf`). The reference is `compare`, else `hybrid` when it is scored, else the first
    mode; it is scored too.

    Raises:
        UsageError: A mode or fusion that does not exist.
    """
    from keepui_engine.search.finding import FUSIONS

    chosen = list(dict.fromkeys(modes or MODES))
    reference = compare or ("hybrid" if "hybrid" in chosen else chosen[0])
    if reference not in chosen:
        chosen.append(reference)
    for m in chosen:
        mode, _, fusion = m.partition(":")
        if mode not in MODES or (fusion and (mode != "hybrid" or fusion not in FUSIONS)):
            raise UsageError(
                f"--mode {m!r}: choose from {', '.join(MODES)}, or hybrid:FUSION with FUSION "
                f"one of {', '.join(FUSIONS)}."
            )
    return chosen, reference


def beir_files(
    folder: Path, queries: Path | None = None, qrels: Path | None = None
) -> tuple[Path, Path, Path]:
    """corpus.jsonl, queries.jsonl and qrels/test.tsv of a BEIR dataset folder.

    Args:
        folder: The dataset folder.
        queries: Another queries file to use instead of the folder's.
        qrels: Another qrels file (e.g. qrels/dev.tsv) to use instead of the folder's.

    Raises:
        UsageError: The folder lacks one of them.
    """
    paths = (
        folder / "corpus.jsonl",
        queries or folder / "queries.jsonl",
        qrels or folder / "qrels" / "test.tsv",
    )
    missing = [
        str(p.relative_to(folder)) for p in paths if p.is_relative_to(folder) and not p.is_file()
    ]
    if missing:
        raise UsageError(
            f"{folder} is not a BEIR folder: no {', '.join(missing)} (a BEIR dataset holds "
            "corpus.jsonl, queries.jsonl and qrels/test.tsv)."
        )
    return paths


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


def scratch_store(corpus: Path, model: str, split: tuple[int, int, int] | None = None) -> Path:
    """Where the scratch store for this corpus, model and split settings lives.

    Args:
        corpus: The corpus file.
        model: The embedding model's name.
        split: (chunk_size, chunk_overlap, min_chunk_size) of its [ingest] settings; default:
            what a new store gets. A store made with other split settings has other parts,
            so it is never reused for these.
    """
    from keepui_engine.core.config import Settings

    if split is None:
        st = Settings(store=Path())
        split = (st.chunk_size, st.chunk_overlap, st.min_chunk_size)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "keepui" / "eval"
    size, overlap, least = split
    return base / f"{corpus.stem}-{fingerprint(corpus, model)}-c{size}-o{overlap}-m{least}"


def evaluate_judged(
    wb: Any,
    modes: list[str] | None = None,
    progress: Progress | None = None,
    compare: str | None = None,
) -> EvalResult:
    """Score every mode on the store's own judged queries, with the same trec_eval path.

    The store is searched as it is (its keepui.toml, the near-duplicate fold off, as for
    BEIR); per-query results are keyed by the query's text.

    Raises:
        UsageError: Bad mode, or no judgments yet.
    """
    chosen, reference = parse_modes(modes, compare)
    judged: dict[str, dict[str, int]] = {}
    for j in wb.judgments():
        judged.setdefault(j.query, {})[j.id] = j.grade
    if not judged:
        raise UsageError(
            "no judgments in this store yet: record some with keepui judge QUERY ID --grade N "
            "(or + and - on a hit in the workbench)."
        )
    tell = progress or (lambda phase, done, total: None)
    with wb.session("find"):
        runs, timing = run_modes(wb, {q: q for q in judged}, chosen, tell, drop_own=False)
    head = EvalResult(str(wb.store), wb.stats().items, len(judged), {}, {}, 0.0, runs)
    return scored(head, judged, timing, reference, "")


def run_modes(
    wb: Any, texts: dict[str, str], modes: list[str], tell: Progress, *, drop_own: bool
) -> tuple[dict[str, dict[str, list[tuple[str, float]]]], dict[str, list[float]]]:
    """Each mode's top DEPTH per query (without the query's own id when `drop_own`), timed."""
    runs: dict[str, dict[str, list[tuple[str, float]]]] = {}
    timing: dict[str, list[float]] = {}
    for name in modes:
        mode, _, fusion = name.partition(":")
        runs[name], timing[name] = {}, []
        tell(name, 0, len(texts))
        for n, (qid, text) in enumerate(texts.items(), 1):
            t0 = time.perf_counter()
            hits = wb.find(
                text, limit=DEPTH + drop_own, mode=mode, fusion=fusion or None, dedup=False
            ).hits
            timing[name].append((time.perf_counter() - t0) * 1000)
            ranked = [(h.id, h.score) for h in hits if not (drop_own and h.id == qid)]
            runs[name][qid] = ranked[:DEPTH]
            tell(name, n, len(texts))
    return runs, timing


def scored(
    head: EvalResult,
    judged: dict[str, dict[str, int]],
    timing: dict[str, list[float]],
    reference: str,
    identical_ids: str,
) -> EvalResult:
    """The result with per-query scores, means, bootstrap intervals and paired comparisons."""
    from dataclasses import replace

    from keepui_engine.search.significance import bootstrap_ci

    per_query = {mode: trec_scores(run, judged) for mode, run in head.runs.items()}
    summary, intervals = {}, {}
    for mode, table in per_query.items():
        values = {m: [q[m] for q in table.values()] for m in METRICS}
        summary[mode] = {
            **{m: sum(v) / max(len(v), 1) for m, v in values.items()},
            "query_ms": sum(timing[mode]) / max(len(timing[mode]), 1),
            "query_p50_ms": _percentile(timing[mode], 50),
            "query_p95_ms": _percentile(timing[mode], 95),
        }
        intervals[mode] = {m: list(bootstrap_ci(v)) for m, v in values.items()}
    scored = replace(
        head,
        modes=summary,
        per_query=per_query,
        intervals=intervals,
        identical_ids=identical_ids,
    )
    return scored.compared_with(reference)


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
