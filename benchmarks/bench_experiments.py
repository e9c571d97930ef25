"""Experiments and the hybrid optimizer on SciFact, through the real CLI.

Copies keepui eval's SciFact scratch store (building it first when there is none: ~35 min on
2 cores) to a store of its own, so the judgments, query set and experiments stored here never
touch eval's cache; then, printing each command as it runs it:

  keepui judgments import --qrels qrels/test.tsv --queries queries.jsonl
  keepui queryset add scifact --from-judgments          (the 300 test queries)
  keepui eval --beir SCIFACT --store COPY -m hybrid     (the reference nDCG@10)
  keepui experiment run --queries scifact --config default --config rrf
  keepui experiment optimize --queries scifact --folds 5

and reports the experiment's default nDCG@10 beside eval --beir's (they must agree: the same
store, queries and find), the rrf configuration against it, and the optimizer's held-out gain
with its interval (an interval that spans 0 is no gain).

Run: .venv/bin/python benchmarks/bench_experiments.py [--folds 5] [--fresh] [--scifact DIR]
Writes benchmarks/results/bench_experiments.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _common as c

SCIFACT = c.REPO.parent / "shared" / "data" / "beir" / "scifact"
RRF = '\n[search.configs.rrf]\nfusion = "rrf"\n'


def keepui(store: Path, *args: str) -> tuple[dict[str, Any], float, str]:
    """Run `keepui ARGS --store STORE --json`; its document, seconds, and the command line."""
    shown = "keepui " + " ".join(args)
    print(f"$ {shown}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    got = subprocess.run(
        [sys.executable, "-m", "keepui", *args, "--store", str(store), "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "KEEPUI_NO_SERVER": "1", "PYTHONPATH": str(c.REPO)},
    )
    took = time.perf_counter() - t0
    if got.returncode != 0:
        sys.exit(f"{shown} failed ({got.returncode}): {got.stderr}")
    return json.loads(got.stdout), took, shown


def prepared(folder: Path, fresh: bool) -> Path:
    """A copy of eval's SciFact store for this benchmark (built and copied once)."""
    from keepui_engine.beir import evaluate

    from keepui_engine.search.evaluation import scratch_store

    source = scratch_store(folder / "corpus.jsonl", c.MODEL)
    if not (source / "eval.json").exists():
        print(f"building the SciFact store at {source} (keepui eval) …", file=sys.stderr)
        evaluate(folder, modes=["hybrid"])
    target = source.parent.parent / "bench-experiments" / source.name
    if fresh and target.exists():
        shutil.rmtree(target)
    if not target.exists():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.sock", "*.lock"))
        with (target / "keepui.toml").open("a") as fh:
            fh.write(RRF)
    return target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--fresh", action="store_true", help="copy eval's store again")
    ap.add_argument("--scifact", type=Path, default=SCIFACT, help="the SciFact folder")
    args = ap.parse_args()
    folder = args.scifact.resolve()
    if not folder.exists():
        print(f"skipped: {folder} is absent (SciFact is read in place, never copied)")
        return
    store = prepared(folder, args.fresh)
    out: dict[str, Any] = {"store": str(store), "commands": {}, "seconds": {}}

    def step(name: str, *cli: str) -> dict[str, Any]:
        doc, took, shown = keepui(store, *cli)
        out["commands"][name], out["seconds"][name] = shown, round(took, 1)
        return doc

    imported = step(
        "import",
        "judgments", "import",
        "--qrels", str(folder / "qrels" / "test.tsv"),
        "--queries", str(folder / "queries.jsonl"),
    )  # fmt: skip
    qs = step("queryset", "queryset", "add", "scifact", "--from-judgments")
    beir = step("eval", "eval", "--beir", str(folder), "-m", "hybrid")
    exp = step(
        "run", "experiment", "run", "--queries", "scifact", "--config", "default", "--config", "rrf"
    )
    opt = step("optimize", "experiment", "optimize", "--queries", "scifact", "--folds",
               str(args.folds))  # fmt: skip
    rrf = next(t for t in exp["paired"] if t["metric"] == "ndcg@10")
    out.update(
        imported=imported,
        queries=qs["count"],
        eval_beir_ndcg10=beir["modes"]["hybrid"]["ndcg@10"],
        experiment={
            "id": exp["id"],
            "judged": exp["judged"],
            "scores": exp["scores"],
            "intervals": exp["intervals"],
            "rrf_vs_default": rrf,
            "pool": sum(len(v) for v in exp["pool"].values()),
        },
        optimize={k: opt[k] for k in ("heldout", "heldout_ci", "default", "default_ci",
                                      "paired", "verdict", "gain", "best", "chosen", "points")},
    )  # fmt: skip
    d, ci = exp["scores"]["default"], exp["intervals"]["default"]["ndcg@10"]
    print(
        f"judgments imported: {imported['recorded']} ({imported['queries']} queries); "
        f"query set: {qs['count']} queries"
    )
    print(f"eval --beir hybrid nDCG@10       {out['eval_beir_ndcg10']:.4f}")
    print(
        f"experiment default nDCG@10       {d['ndcg@10']:.4f} [{ci[0]:.3f}, {ci[1]:.3f}]  "
        f"P@5 {d['p@5']:.4f}  MRR@10 {d['mrr@10']:.4f}  R@100 {d['recall@100']:.4f}"
    )
    r = exp["scores"]["rrf"]
    print(
        f"experiment rrf nDCG@10           {r['ndcg@10']:.4f}  vs default {rrf['delta']:+.4f} "
        f"[{rrf['low']:+.3f}, {rrf['high']:+.3f}] p={rrf['p']:.4f}"
    )
    t = opt["paired"]
    print(
        f"optimize: held-out nDCG@10 {opt['heldout']:.4f} [{opt['heldout_ci'][0]:.3f}, "
        f"{opt['heldout_ci'][1]:.3f}] vs default {opt['default']:.4f}: {t['delta']:+.4f} "
        f"[{t['low']:+.3f}, {t['high']:+.3f}] p={t['p']:.4f} -> {opt['verdict']}; best "
        f"{opt['best']}"
    )
    print("seconds: " + ", ".join(f"{k} {v}" for k, v in out["seconds"].items()))
    c.RESULTS.mkdir(exist_ok=True)
    (c.RESULTS / "bench_experiments.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
