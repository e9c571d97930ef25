"""The owner process a command starts on its own: started once, reused, replaced when stale,
idle exit, `serve --status/--stop`, `--no-server`, killed with -9, the start race, and the
fast path that hands whole command lines to it (same output, few imports)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import open_workbench
from keepui_engine.core import owner, wire


def wait_for(condition, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def cli(store: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120):
    """`python -m keepui ARGS --store STORE`, output captured (no KEEPUI_NO_SERVER)."""
    return subprocess.run(
        [sys.executable, "-m", "keepui", *args, "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.fixture(autouse=True)
def _servers_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KEEPUI_NO_SERVER", raising=False)
    # the registry of auto-started servers then lives under this test's own HOME: another
    # worker's servers are never counted (nor stopped) by this test's
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Path]:
    """A fake-embedder store; whatever server it got is stopped after the test."""
    path = make_fake_store(tmp_path / "store")
    yield path
    info = owner.stop(str(path), timeout=30)
    assert info is None or not owner.is_up(str(path))


def status(store: Path) -> dict:  # type: ignore[type-arg]
    got = cli(store, "serve", "--status", "--json")
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)  # type: ignore[no-any-return]


def test_first_command_starts_an_owner_that_later_commands_use(store: Path) -> None:
    assert status(store)["state"] == "stopped"
    put = cli(store, "put", "the first note about rivers", "-i", "n1")
    assert put.returncode == 0, put.stderr
    assert "starting a server" in put.stderr
    first = status(store)
    assert first["state"] == "running" and first["kind"] == "auto"
    assert first["log"] == str(store / "server.log")
    again = cli(store, "put", "a second note about lakes", "-i", "n2")
    found = cli(store, "find", "rivers", "--json")
    assert again.returncode == 0 and "starting" not in again.stderr
    assert json.loads(found.stdout)["hits"][0]["id"] == "n1"
    later = status(store)
    assert later["pid"] == first["pid"]  # the same owner answered
    assert later["requests"] > first["requests"]
    # its worker drains the queue: the summaries arrive with no further command
    wait_for(lambda: json.loads(cli(store, "pending", "--json").stdout)["counts"] == {})
    assert "pending" not in cli(store, "get", "n1").stdout


def test_serve_stop_and_status(store: Path) -> None:
    assert cli(store, "put", "a note", "-i", "a").returncode == 0
    pid = status(store)["pid"]
    stop = cli(store, "serve", "--stop")
    assert stop.returncode == 0 and stop.stdout.strip() == "stopped"
    assert status(store) == {"schema": 1, "store": str(store), "state": "stopped", "running": False}
    wait_for(lambda: not owner.alive(pid))
    nothing = cli(store, "serve", "--stop", "--json")
    assert nothing.returncode == 0 and json.loads(nothing.stdout)["state"] == "stopped"
    both = cli(store, "serve", "--stop", "--status")
    assert both.returncode == 1


def test_an_idle_owner_exits(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "store", idle_exit=1)
    assert cli(store, "put", "a note", "-i", "a").returncode == 0
    wait_for(lambda: not owner.is_up(str(store)))
    assert "idle for 1 s" in (store / "server.log").read_text()


def test_no_server_runs_in_process(store: Path) -> None:
    flag = cli(store, "put", "--no-server", "a note", "-i", "a")
    assert flag.returncode == 0, flag.stderr
    env = {**os.environ, "KEEPUI_NO_SERVER": "1"}
    by_env = cli(store, "find", "note", "--ids", env=env)
    assert by_env.stdout.split() == ["a"]
    assert not owner.is_up(str(store)) and not (store / "server.log").exists()
    root = cli(store, "--no-server", "get", "a")
    assert root.returncode == 0 and "a note" in root.stdout
    assert not owner.is_up(str(store))


def test_a_server_of_another_build_is_replaced_not_used(store: Path) -> None:
    env = {**os.environ, "KEEPUI_BUILD": "0.0.1+old"}
    old = subprocess.Popen(
        [sys.executable, "-m", "keepui", "serve", "--auto", "--store", str(store)],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: owner.is_up(str(store)) or old.poll() is not None)
        assert status(store)["build"] == "0.0.1+old"
        put = cli(store, "put", "a note for the new build", "-i", "a")
        assert put.returncode == 0, put.stderr
        assert "replacing the server" in put.stderr
        assert old.wait(timeout=30) == 0  # asked to stop, it stopped cleanly
        now = status(store)
        assert now["pid"] != old.pid and now["build"] == wire.build_id()
        in_process = cli(store, "get", "a", "--json")  # the usual path checks the build too
        assert json.loads(in_process.stdout)["text"] == "a note for the new build"
    finally:
        if old.poll() is None:
            old.kill()


def test_a_changed_keepui_toml_gets_a_new_server(store: Path) -> None:
    assert cli(store, "put", "a note", "-i", "a").returncode == 0
    pid = status(store)["pid"]
    toml = store / "keepui.toml"
    toml.write_text(toml.read_text().replace("half_life_days = 30", "half_life_days = 60"))
    found = cli(store, "find", "note", "--ids")
    assert found.stdout.split() == ["a"] and "replacing" in found.stderr
    assert status(store)["pid"] != pid


def test_two_commands_racing_start_exactly_one_server(store: Path) -> None:
    assert cli(store, "put", "--no-server", "a note about racing", "-i", "a").returncode == 0
    cmd = [sys.executable, "-m", "keepui", "find", "racing", "--ids", "--store", str(store)]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [o[0].split() for o in outs] == [["a"]] * 3
    assert sum("starting a server" in o[1] for o in outs) == 1
    log = (store / "server.log").read_text()
    assert log.count("keepui: serving") == 1, log


def test_an_owner_killed_with_minus_9_loses_nothing_acknowledged(store: Path) -> None:
    for i in range(5):
        got = cli(store, "put", f"acknowledged note number {i}", "-i", f"n{i}")
        assert got.returncode == 0, got.stderr
    pid = status(store)["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not owner.alive(pid))
    listed = cli(store, "list", "--json")
    ids = sorted(i["id"] for i in json.loads(listed.stdout)["items"])
    assert ids == [f"n{i}" for i in range(5)]
    found = cli(store, "find", "acknowledged note", "--ids", "-n", "10")
    assert sorted(found.stdout.split()) == [f"n{i}" for i in range(5)]
    assert status(store)["pid"] != pid  # a new owner took the store


def test_the_workbench_takes_over_from_an_auto_started_server(store: Path) -> None:
    assert cli(store, "put", "a note", "-i", "a").returncode == 0
    pid = status(store)["pid"]
    with open_workbench(store, own=True) as wb:
        assert wb.get("a").text == "a note"
        assert not owner.alive(pid) or status(store).get("pid") != pid
    assert "owner taking over" in (store / "server.log").read_text()


def test_past_the_limit_a_new_server_stops_the_longest_idle_one(tmp_path: Path) -> None:
    env = {**os.environ, "KEEPUI_MAX_SERVERS": "1"}
    first, second = (make_fake_store(tmp_path / name) for name in ("first", "second"))
    try:
        assert cli(first, "put", "a note", "-i", "a", env=env).returncode == 0
        wait_for(lambda: status(first)["idle_s"] >= owner.IDLE_BEFORE_TRIM_S)
        assert cli(second, "put", "a note", "-i", "a", env=env).returncode == 0
        wait_for(lambda: not owner.is_up(str(first)))
        assert owner.is_up(str(second))
        assert f"asked the idle server of {first} to stop" in (second / "server.log").read_text()
    finally:
        for store in (first, second):
            owner.stop(str(store))


# -- the fast path ------------------------------------------------------------------------------
CASES = [
    ("get", "a"),
    ("get", "a", "--history"),
    ("get", "nope"),
    ("find", "rivers", "--ids"),
    ("find", "rivers", "--json", "-n", "2"),
    ("find",),
    ("find", "x", "--limit", "nan"),
    ("list",),
    ("list", "--facets", "--json"),
    ("tag", "nope", "-t", "k=v"),
    ("context", "rivers", "--max-tokens", "50"),
    ("now",),
    ("stats", "--json"),
]


def _normalise(text: str) -> object:
    """A command's stdout without what differs between two runs a moment apart: the decay
    (and the scores it scales) past 3 decimals, timings, the store's size on disk."""

    def walk(value: object) -> object:
        if isinstance(value, float):
            return round(value, 3)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {
                k: walk(v) for k, v in value.items() if k != "store_bytes" and not k.endswith("ms")
            }
        return value

    try:
        return walk(json.loads(text))
    except ValueError:
        return text


def test_commands_handed_to_the_owner_print_what_they_print_in_process(store: Path) -> None:
    for i, text in enumerate(["rivers and lakes", "rivers of the north", "deserts"]):
        assert (
            cli(store, "put", "--no-server", text, "-i", "a" if i == 0 else f"d{i}").returncode == 0
        )
    in_process = [cli(store, "--no-server", *case) for case in CASES]
    assert cli(store, "find", "rivers", "--ids").returncode == 0  # starts the owner
    served = [cli(store, *case) for case in CASES]
    for case, here, there in zip(CASES, in_process, served, strict=True):
        assert there.returncode == here.returncode, case
        assert _normalise(there.stdout) == _normalise(here.stdout), case
        assert there.stderr == here.stderr, case
    stats = json.loads(served[-1].stdout)
    assert stats["items"] == 3


def test_the_fast_path_imports_no_typer_numpy_duckdb_or_torch(store: Path) -> None:
    assert cli(store, "put", "a note about imports", "-i", "a").returncode == 0
    probe = (
        "import sys\n"
        "from keepui.cli import main\n"
        "try:\n"
        f"    main(['--store', {str(store)!r}, 'get', 'a'])\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "heavy = [m for m in ('typer', 'click', 'numpy', 'duckdb', 'torch', 'rich')\n"
        "         if m in sys.modules]\n"
        "print('HEAVY', code, heavy, file=sys.stderr)\n"
    )
    got = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "HEAVY 0 []" in got.stderr, got.stderr
    assert "a note about imports" in got.stdout
