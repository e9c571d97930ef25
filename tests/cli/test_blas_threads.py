"""A keepui process gives numpy's BLAS one thread unless the user chose another number; a
store's owner (`serve`) keeps a thread per core."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from keepui.cli import one_blas_thread


def test_unset_means_one_and_a_users_choice_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("KEEPUI_SET_OPENBLAS_THREADS", raising=False)
    one_blas_thread(["find", "x"])
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    # the owner this command starts inherits the environment, and gives the choice back
    one_blas_thread(["serve", "--auto", "--store", "s"])
    assert "OPENBLAS_NUM_THREADS" not in os.environ
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    one_blas_thread(["find", "x"])
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
    one_blas_thread(["serve"])
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"


def test_numpy_in_a_keepui_process_runs_one_blas_thread() -> None:
    pytest.importorskip("threadpoolctl", reason="threadpoolctl reads the BLAS thread count")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    code = (
        "from keepui.cli import one_blas_thread; one_blas_thread(['get', 'x'])\n"
        "import numpy, threadpoolctl\n"
        "print(max(p['num_threads'] for p in threadpoolctl.threadpool_info() "
        "if p['internal_api'] == 'openblas'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"
