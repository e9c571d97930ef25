"""A keepui process gives numpy's BLAS one thread unless the user chose another number."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from keepui.cli import one_blas_thread


def test_unset_means_one_and_a_users_choice_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"


def test_numpy_in_a_keepui_process_runs_one_blas_thread() -> None:
    pytest.importorskip("threadpoolctl", reason="threadpoolctl reads the BLAS thread count")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    code = (
        "from keepui.cli import one_blas_thread; one_blas_thread()\n"
        "import numpy, threadpoolctl\n"
        "print(max(p['num_threads'] for p in threadpoolctl.threadpool_info() "
        "if p['internal_api'] == 'openblas'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


def test_a_batch_through_the_numpy_model_runs_on_every_core() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import numpy  # noqa: F401  (loads OpenBLAS)

    from keepui_engine.providers.sentence_transformers import every_core

    def blas_threads() -> int:
        pools = threadpoolctl.threadpool_info()
        return max(p["num_threads"] for p in pools if p["internal_api"] == "openblas")

    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        with every_core():
            inside = blas_threads()
        after = blas_threads()
    assert inside == (os.cpu_count() or 1) and after == 1
