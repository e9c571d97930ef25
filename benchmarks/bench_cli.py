"""Wall time of real `keepui` subprocesses (real all-MiniLM-L6-v2), side by side: in-process
(`KEEPUI_NO_SERVER=1`, each command loads what it needs) against commands answered by the
store's owner, which the first command starts on its own (issue 26).

  * baseline: `python -c pass` (the interpreter alone);
  * in-process: `find --json`, `get ID`, `put NOTE` on a store of ~1,000 notes, no server;
  * first command on a store with no server: when stderr shows activity (target <= 0.5 s) and
    when it ends (the owner starts and loads the model);
  * after it: `find --json`, `get`, `put NOTE` (targets: p50 <= 60 ms each), and list, tag,
    del, context, reflect, now;
  * `put` of the shared docs folder (../shared/data/docs) into a fresh store: seconds until
    `pending` is empty with no further command (target <= 30 s after the put), and the
    owner's peak RSS (target <= 700 MB);
  * Ctrl-C: SIGINT to `put DIR` while it embeds a batch, in-process and through the owner:
    seconds from the signal to the process's exit (target <= 1 s).
Every query and note is new to the store, so its embedding is always computed.

Run: .venv/bin/python benchmarks/bench_cli.py [--quick]
  --quick  300 notes, 5 runs of each command
Writes benchmarks/results/bench_cli.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as c

VENV = c.REPO / ".venv" / "bin"
DOCS = c.REPO.parent / "shared" / "data" / "docs"
KEEPUI = str(VENV / "keepui")
TARGET_WARM_S = 0.060
TARGET_ACTIVITY_S = 0.5
TARGET_DRAINED_S = 30.0
TARGET_RSS_MB = 700.0
TARGET_INTERRUPT_S = 1.0


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run a command to completion; its wall time (fails loudly on a non-zero exit)."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{cmd[1:4]} failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")
    return wall, proc


def series(
    rep: c.Report, key: str, cmds: list[list[str]], env: dict[str, str], target: float | None
) -> None:
    """Time each command; add the median and p95 (the median checked against a target)."""
    times = [run(cmd, env)[0] for cmd in cmds]
    med = c.pct(times, 50)
    ok = None if target is None else med <= target
    rep.add(f"{key}_p50_s", med, "s", None if target is None else f"<= {target:g}", ok)
    rep.add(f"{key}_p95_s", c.pct(times, 95), "s")
    print(f"{key}: p50 {med * 1000:.0f} ms over {len(times)} runs", flush=True)


def first_command(store: Path, cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(seconds to the first byte on stderr, seconds to exit) of a command."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    proc.stderr.read(1)
    activity = time.perf_counter() - t0
    proc.communicate(timeout=300)
    if proc.returncode != 0:
        sys.exit(f"the first command failed ({proc.returncode})")
    return activity, time.perf_counter() - t0


def owner_pid(store: Path, env: dict[str, str]) -> int:
    _, got = run([KEEPUI, "serve", "--status", "--json", "--store", str(store)], env)
    return int(json.loads(got.stdout)["pid"])


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def drained(rep: c.Report, root: Path, env: dict[str, str]) -> None:
    """put the shared docs into a fresh store; time until its queue is empty; owner's RSS."""
    if not DOCS.is_dir():
        rep.note(f"skipped the docs folder: {DOCS} is absent")
        return
    store = root / "docs-store"
    put_s, _ = run([KEEPUI, "put", str(DOCS), "--store", str(store)], env)
    t0 = time.perf_counter()
    while True:
        _, got = run([KEEPUI, "pending", "--json", "--store", str(store)], env)
        if not json.loads(got.stdout)["counts"]:
            break
        if time.perf_counter() - t0 > 600:
            sys.exit("the queue did not drain in 10 minutes")
        time.sleep(0.5)
    wait = time.perf_counter() - t0
    rss = peak_rss_mb(owner_pid(store, env))
    rep.add("docs_put_s", put_s, "s")
    rep.add("docs_pending_empty_after_s", wait, "s", f"<= {TARGET_DRAINED_S:g}", wait <= 30)
    rep.add("owner_peak_rss_mb", rss, "MB", f"<= {TARGET_RSS_MB:g}", rss <= TARGET_RSS_MB)
    print(f"docs: put {put_s:.1f} s, queue empty {wait:.1f} s later, owner {rss:.0f} MB")
    run([KEEPUI, "serve", "--stop", "--store", str(store)], env)


def interrupted(root: Path, env: dict[str, str], no_server: bool, runs: int) -> list[float]:
    """Seconds from SIGINT to exit of `put DOCS` interrupted while it embeds a batch."""
    times = []
    for i in range(runs):
        store = root / f"ctrl-c-{int(no_server)}-{i}"
        trace = {**env, "KEEPUI_TEST_TRACE": "1"}
        if no_server:
            trace["KEEPUI_NO_SERVER"] = "1"
        cmd = [KEEPUI, "put", str(DOCS), "--store", str(store)]
        proc = subprocess.Popen(cmd, env=trace, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        stage = b"at embed" if no_server else b"at extract"
        seen = 0
        for line in proc.stderr:
            seen += stage in line
            if seen == (2 if no_server else 24):  # inside the second batch's work
                break
        time.sleep(0.2)  # into the encode (or the owner's put), not at its edge
        t0 = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 130:
            print(f"  run {i}: exit {proc.returncode} (finished before the signal?)")
        subprocess.run(
            [KEEPUI, "serve", "--stop", "--store", str(store)], env=env, capture_output=True
        )
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="300 notes, 5 runs of each command")
    args = ap.parse_args()
    n_notes, n = (300, 5) if args.quick else (1000, 20)
    rep = c.Report("bench_cli", args.quick)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("KEEPUI_NO_SERVER", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's shell: compiled modules are kept
    in_process = {**env, "KEEPUI_NO_SERVER": "1"}
    notes = c.make_notes(n_notes + 8 * n + 10, seed=31)
    queries = iter(c.make_queries(8 * n + 10, seed=33))
    base, extra = notes[:n_notes], iter(notes[n_notes:])
    series(rep, "python_c_pass", [[str(VENV / "python"), "-c", "pass"]] * n, env, None)

    with tempfile.TemporaryDirectory(prefix="keepui-bench-cli-") as tmp:
        root = Path(tmp)
        store = root / "store"
        from keepui_engine import PutSpec, open_workbench

        os.environ["KEEPUI_NO_SERVER"] = "1"  # the store is built here, by this process
        with c.timer() as t_setup, open_workbench(store) as wb:
            stored = wb.put_many([PutSpec(t) for t in base])
        ids = iter([r.id for r in stored])
        print(f"store of {n_notes} notes built in {t_setup[0]:.1f} s", flush=True)
        s = ["--store", str(store)]

        def find(q: str) -> list[str]:
            return [KEEPUI, "find", q, "--json", *s]

        def get(doc_id: str) -> list[str]:
            return [KEEPUI, "get", doc_id, *s]

        def put(text: str) -> list[str]:
            return [KEEPUI, "put", text, "--json", *s]

        run(find(next(queries)), in_process)  # the OS file cache, as on a user's second command
        runs = max(3, n // 4)
        series(rep, "inproc_find", [find(next(queries)) for _ in range(runs)], in_process, None)
        series(rep, "inproc_get", [get(next(ids)) for _ in range(runs)], in_process, None)
        series(rep, "inproc_put", [put(next(extra)) for _ in range(runs)], in_process, None)

        activity, first = first_command(store, find(next(queries)), env)
        ok = activity <= TARGET_ACTIVITY_S
        rep.add("first_command_stderr_s", activity, "s", f"<= {TARGET_ACTIVITY_S:g}", ok)
        rep.add("first_command_total_s", first, "s")
        print(f"first command: stderr after {activity:.3f} s, done after {first:.2f} s")
        series(rep, "owner_find", [find(next(queries)) for _ in range(n)], env, TARGET_WARM_S)
        series(rep, "owner_get", [get(next(ids)) for _ in range(n)], env, TARGET_WARM_S)
        series(rep, "owner_put", [put(next(extra)) for _ in range(n)], env, TARGET_WARM_S)
        others = {
            "list": lambda: [KEEPUI, "list", *s],
            "tag": lambda: [KEEPUI, "tag", next(ids), "-t", "bench=yes", *s],
            "del": lambda: [KEEPUI, "del", next(ids), "--purge", *s],
            "context": lambda: [KEEPUI, "context", next(queries), *s],
            "reflect": lambda: [KEEPUI, "reflect", next(queries), *s],
            "now": lambda: [KEEPUI, "now", next(extra), *s],
        }
        for name, make in others.items():
            series(rep, f"owner_{name}", [make() for _ in range(max(3, n // 4))], env, None)
        run([KEEPUI, "serve", "--stop", *s], env)

        drained(rep, root, env)
        if DOCS.is_dir():
            for no_server, key in ((True, "inproc"), (False, "owner")):
                times = interrupted(root, env, no_server, 3)
                worst = max(times)
                ok = worst <= TARGET_INTERRUPT_S
                rep.add(f"ctrl_c_{key}_worst_s", worst, "s", f"<= {TARGET_INTERRUPT_S:g}", ok)
                rep.add(f"ctrl_c_{key}_median_s", c.pct(times, 50), "s")
                print(f"Ctrl-C {key}: {', '.join(f'{t:.2f}' for t in times)} s")
        shutil.rmtree(root / "docs-store", ignore_errors=True)

    rep.note(
        f"store: {n_notes} synthetic notes put in-process with the real model "
        f"({t_setup[0]:.0f} s); every query and note is new to the store"
    )
    rep.note(
        "inproc = KEEPUI_NO_SERVER=1, a fresh process opens the store and loads the model; "
        "owner = answered by the `keepui serve --auto` the first command started"
    )
    rep.finish()


if __name__ == "__main__":
    main()
