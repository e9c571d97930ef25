"""Fixtures for the multi-process tests: a fake-embedder store and a tracker of child processes."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mp_support import make_store  # noqa: E402


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A fresh store directory using the fake embedder (keepui.toml written before first use)."""
    return make_store(tmp_path / "store")


class Children:
    """Every child process a test started, so teardown can kill stragglers by pid."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[str]] = []

    def add(self, proc: subprocess.Popen[str]) -> subprocess.Popen[str]:
        self.procs.append(proc)
        return proc

    def kill_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture
def children() -> Iterator[Children]:
    """Tracks child processes; any still running at teardown is SIGKILLed (by its own pid)."""
    kids = Children()
    yield kids
    kids.kill_all()
