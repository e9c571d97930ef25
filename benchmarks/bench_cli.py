"""Wall time of real `keepui` subprocesses on a store of ~1,000 notes (real all-MiniLM-L6-v2).

  * baselines: `python -c pass`, `python -c "import keepui.cli"` and `keepui --version`
    (10 runs each: interpreter start, CLI imports, typer parsing without the engine);
  * cold: no server running, each command a fresh `.venv/bin/keepui` process that takes the store
    lock, loads the model and the index itself: `keepui find Q --json` (10 runs) and
    `keepui put TEXT --json` (10 runs); one discarded run first (OS file cache warm, like a
    user's second command of the day);
  * warm: a `keepui serve --store S` process running; the same commands go over its socket
    (20 runs each), plus the same find from this process through the socket
    (Workbench client call, no process start: the server's share of a warm command).
Every query and note is new to the store, so the query embedding is always computed.
Targets: find cold median <= 1.5 s, warm median <= 150 ms.

Run: .venv/bin/python benchmarks/bench_cli.py [--quick]
  --quick  3 cold and 5 warm runs of each command, 300 notes
Writes benchmarks/results/bench_cli.json.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as c

VENV = c.REPO / ".venv" / "bin"
TARGET_COLD_S = 1.5
TARGET_WARM_S = 0.150


def run(cmd: list[str], env: dict[str, str], *, json_out: bool = False) -> float:
    """Run a command to completion; return its wall time (fails loudly on a non-zero exit)."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{cmd[:3]} failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")
    if json_out and json.loads(proc.stdout).get("hits") == []:
        sys.exit(f"{cmd[:3]} found nothing: is --store honoured?")
    return wall


def series(
    rep: c.Report,
    key: str,
    cmds: list[list[str]],
    env: dict[str, str],
    target: float | None = None,
    json_out: bool = False,
) -> None:
    """Time each command; add median and p95 (and check the median against a target)."""
    times = [run(cmd, env, json_out=json_out) for cmd in cmds]
    med = c.pct(times, 50)
    rep.add(
        f"{key}_median_s",
        med,
        "s",
        None if target is None else f"<= {target:g}",
        None if target is None else med <= target,
    )
    rep.add(f"{key}_p95_s", c.pct(times, 95), "s")
    print(f"{key}: median {med:.3f} s over {len(times)} runs", flush=True)


def wait_for_server(store: Path, proc: subprocess.Popen[bytes], timeout: float = 180) -> float:
    """Seconds until the server answers on its socket."""
    from keepui_engine import server

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if proc.poll() is not None:
            sys.exit(f"keepui serve exited early with {proc.returncode}")
        sock = server.connect(store, timeout=5)
        if sock is not None:
            sock.close()
            return time.perf_counter() - t0
        time.sleep(0.05)
    sys.exit("keepui serve did not start answering in time")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs, 300 notes")
    args = ap.parse_args()
    n_notes, n_cold, n_warm = (300, 3, 5) if args.quick else (1000, 10, 20)
    rep = c.Report("bench_cli", args.quick)
    py, keepui = str(VENV / "python"), str(VENV / "keepui")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    notes = c.make_notes(n_notes + 2 * (n_cold + n_warm) + 1, seed=31)
    queries = c.make_queries(2 * (n_cold + n_warm) + 1 + n_warm, seed=33)
    base, extra = notes[:n_notes], iter(notes[n_notes:])
    qs = iter(queries)

    series(rep, "python_c_pass", [[py, "-c", "pass"]] * n_cold, env)
    series(rep, "python_import_keepui_cli", [[py, "-c", "import keepui.cli"]] * n_cold, env)
    series(rep, "keepui_version", [[keepui, "--version"]] * n_cold, env)

    with tempfile.TemporaryDirectory(prefix="keepui-bench-cli-") as tmp:
        store = Path(tmp) / "store"
        from keepui_engine import PutSpec, open_workbench

        with c.timer() as t_setup:
            open_workbench(store).put_many([PutSpec(t) for t in base])
        print(f"store of {n_notes} notes built in {t_setup[0]:.1f} s", flush=True)
        env["KEEPUI_STORE"] = str(Path(tmp) / "not-this-one")  # --store must be what counts

        def find(q: str) -> list[str]:
            return [keepui, "find", q, "--json", "--store", str(store)]

        def put(text: str) -> list[str]:
            return [keepui, "put", text, "--json", "--store", str(store)]

        rep.add("cli_first_find_discarded_s", run(find(next(qs)), env, json_out=True), "s")
        series(
            rep,
            "cli_find_cold",
            [find(next(qs)) for _ in range(n_cold)],
            env,
            TARGET_COLD_S,
            json_out=True,
        )
        series(rep, "cli_put_cold", [put(next(extra)) for _ in range(n_cold)], env, json_out=True)

        server = subprocess.Popen(
            [keepui, "serve", "--store", str(store)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            rep.add("serve_ready_s", wait_for_server(store, server), "s")
            series(
                rep,
                "cli_find_warm",
                [find(next(qs)) for _ in range(n_warm)],
                env,
                TARGET_WARM_S,
                json_out=True,
            )
            series(
                rep, "cli_put_warm", [put(next(extra)) for _ in range(n_warm)], env, json_out=True
            )
            client, trips = open_workbench(store), []
            for _ in range(n_warm):
                with c.timer() as t_trip:
                    client.find(next(qs))
                trips.append(t_trip[0])
            rep.add("socket_find_roundtrip_median_s", c.pct(trips, 50), "s")
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        rep.add("serve_exit_code", server.returncode, "")

    rep.note(
        f"store: {n_notes} synthetic notes put in-process with the real model "
        f"({t_setup[0]:.0f} s); every find query and put text is new to the store"
    )
    rep.note(
        "cold = no server, a fresh process loads the model (numpy path) and the index; "
        "warm = same command answered by a running `keepui serve` over its socket"
    )
    rep.finish()


if __name__ == "__main__":
    main()
