"""Put throughput and latency with the real all-MiniLM-L6-v2 model.

Measures, in one process on a fresh store in a temp dir:
  * raw `SentenceTransformer.encode` (batch_size 32, normalize) of N synthetic notes, notes/s;
  * `Workbench.put_many` of the same N notes as PutSpec items in one batch (client mode: the
    call takes the store lock, opens the store, embeds, writes, closes), notes/s, with the time
    spent inside the embedder split out; target: put_many / raw >= 0.8;
  * re-putting the same N notes (all unchanged: embedding cache hits, no new versions);
  * single `Workbench.put` latency p50/p95 over 50 new notes, store kept open as owner
    (`open_workbench(path, own=True)`, warmed up like `keepui serve`), on the N-note store.
Both model instances are loaded and warmed before timing, so neither side pays model load.

Run: .venv/bin/python benchmarks/bench_put.py [--quick] [--profile]
  --quick    1,000 notes instead of 10,000
  --profile  cProfile the put_many call; top functions printed, stats in results/bench_put.prof
Writes benchmarks/results/bench_put.json.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

import _common as c

TARGET_RATIO = 0.8


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000 notes instead of 10,000")
    ap.add_argument("--profile", action="store_true", help="cProfile the put_many call")
    args = ap.parse_args()
    n = 1000 if args.quick else 10000
    rep = c.Report("bench_put", args.quick)
    notes = c.make_notes(n + 50, seed=11)
    batch, singles = notes[:n], notes[n:]
    warm = c.make_queries(64, seed=99)
    rep.note(
        f"{n} distinct synthetic notes, {sum(len(t.split()) for t in batch) / n:.1f} "
        "words on average (seeded; benchmarks/_common.py)"
    )

    from keepui_engine import PutSpec, Workbench
    from keepui_engine.client.settings import load_settings
    from keepui_engine.providers.sentence_transformers import packaged_model_path

    # -- raw encode ---------------------------------------------------------------------------
    with c.timer() as t_load:
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(str(packaged_model_path()), device="cpu", local_files_only=True)
    st.encode(warm, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
    raw_wall: list[float] = []
    raw_cpu: list[float] = []

    def raw_encode() -> None:
        cpu0, t0 = time.process_time(), time.perf_counter()
        st.encode(
            batch,
            batch_size=32,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        raw_wall.append(time.perf_counter() - t0)
        raw_cpu.append(time.process_time() - cpu0)
        print(f"raw encode: {n} notes in {raw_wall[-1]:.1f} s", flush=True)

    raw_encode()

    with tempfile.TemporaryDirectory(prefix="keepui-bench-put-") as tmp:
        store = Path(tmp) / "store"
        settings = load_settings(store)
        emb = c.TimedEmbedder(c.default_embedder(store))
        with c.timer() as t_eload:
            emb.embed(warm)  # > 8 texts: loads the torch model inside the provider
        emb.seconds = 0.0
        wb = Workbench(settings, embedder=emb)  # client mode
        specs = [PutSpec(text) for text in batch]

        prof = cProfile.Profile() if args.profile else None
        cpu0 = time.process_time()
        with c.timer() as t_put:
            if prof:
                prof.enable()
            results = wb.put_many(specs)
            if prof:
                prof.disable()
        put_cpu = time.process_time() - cpu0
        assert sum(r.action == "created" for r in results) == n, "not every note was created"
        put_rate = n / t_put[0]
        embed_s = emb.seconds
        print(
            f"put_many: {n} notes in {t_put[0]:.1f} s ({embed_s:.1f} s in the embedder)", flush=True
        )

        raw_encode()  # again after put_many: the reference is the mean of the two runs
        emb.seconds = 0.0
        with c.timer() as t_again:
            again = wb.put_many(specs)
        assert all(r.action == "unchanged" for r in again)

        # -- single puts, owner mode ----------------------------------------------------------
        owner_emb = c.TimedEmbedder(c.default_embedder(store))
        lat, emb_lat = [], []
        with Workbench(settings, own=True, embedder=owner_emb) as owner:
            owner.warm_up()
            for text in singles:
                before = owner_emb.seconds
                t0 = time.perf_counter()
                res = owner.put(text)
                lat.append(time.perf_counter() - t0)
                emb_lat.append(owner_emb.seconds - before)
                assert res.action == "created"

    raw_rate = n / (sum(raw_wall) / len(raw_wall))
    rep.add("raw_encode_notes_per_s", raw_rate, "notes/s")
    rep.add("raw_encode_run1_s", raw_wall[0], "s")
    rep.add("raw_encode_run2_s", raw_wall[1], "s")
    rep.add("put_many_notes_per_s", put_rate, "notes/s")
    ratio = put_rate / raw_rate
    rep.add("put_many_over_raw_ratio", ratio, "x", f">= {TARGET_RATIO}", ratio >= TARGET_RATIO)
    cpu_ratio = (sum(raw_cpu) / len(raw_cpu)) / put_cpu
    rep.add(
        "cpu_time_ratio_raw_over_put",
        cpu_ratio,
        "x",
        f">= {TARGET_RATIO}",
        cpu_ratio >= TARGET_RATIO,
    )
    rep.add("put_many_total_s", t_put[0], "s")
    rep.add("put_many_embedder_s", embed_s, "s")
    rep.add("put_many_outside_embedder_s", t_put[0] - embed_s, "s")
    rep.add("put_many_overhead_ms_per_note", 1000 * (t_put[0] - embed_s) / n, "ms")
    rep.add("reput_unchanged_notes_per_s", n / t_again[0], "notes/s")
    rep.add("raw_model_load_s", t_load[0], "s")
    rep.add("provider_torch_load_and_warm_s", t_eload[0], "s")
    rep.add("single_put_p50_ms", 1000 * c.pct(lat, 50), "ms")
    rep.add("single_put_p95_ms", 1000 * c.pct(lat, 95), "ms")
    rep.add("single_put_embed_p50_ms", 1000 * c.pct(emb_lat, 50), "ms")
    rep.note(
        "ratio = put_many notes/s over the mean of two raw encodes (one before, one "
        "after put_many); the CPU-time ratio (process CPU seconds) is less sensitive to "
        "other load on the machine"
    )
    rep.note(
        "put_many runs in client mode (store opened and closed inside the call); the "
        "store open/close is included in put_many_total_s"
    )
    rep.note(
        f"single puts: owner-mode Workbench on the {n}-note store, warmed up like "
        "`keepui serve` (one text -> numpy forward pass, not torch)"
    )
    if prof:
        path = c.RESULTS / "bench_put.prof"
        c.RESULTS.mkdir(parents=True, exist_ok=True)
        prof.dump_stats(str(path))
        pstats.Stats(prof).sort_stats("cumulative").print_stats(18)
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    rep.finish()


if __name__ == "__main__":
    main()
