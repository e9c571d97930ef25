"""Ctrl-C and SIGTERM on real keepui processes: stop at once, keep what finished, resume.

Each test starts `keepui` with KEEPUI_TEST_HOLD=STAGE[:N], which makes it wait at that moment
of its work (reading a file, embedding a batch, committing it, running a task) and say so on
stderr; the test reads that line, sends the signal, and checks the exit code, the message,
the store and a second run. No test sleeps: each waits on the child's own output.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from mp_support import keepui_exe
from support import make_fake_store

pytestmark = pytest.mark.slow

DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"
RESUME = "(run the same command again to continue: unchanged files are skipped)"


def _folder(root: Path, n: int = 7) -> Path:
    root.mkdir()
    for i in range(n):
        (root / f"n{i}.txt").write_text(f"note number {i} about topic {i * 7} and more words\n")
    return root


def _start(store: Path, args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [keepui_exe(), *args, "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


def _interrupt_at(
    store: Path, args: list[str], wait_for: str, sig: int = signal.SIGINT, **env: str
) -> tuple[int, str, str]:
    """Run keepui until it prints `wait_for` on stderr, send `sig`; (exit code, out, err)."""
    proc = _start(store, args, env)
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if wait_for in line:
            proc.send_signal(sig)
            break
    else:
        proc.wait(timeout=60)
        pytest.fail(f"keepui never reached {wait_for!r}: {''.join(seen)}")
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, "".join(seen) + err


def _run(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [keepui_exe(), *args, "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _ids(store: Path) -> list[str]:
    listed = _run(store, "list", "-n", "100", "--json")
    assert listed.returncode == 0, listed.stderr
    return sorted(i["id"] for i in json.loads(listed.stdout)["items"])


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_while_reading_keeps_the_stored_batches(tmp_path: Path, sig: int) -> None:
    store = make_fake_store(tmp_path / "store", batch_files=2)
    folder = _folder(tmp_path / "notes")
    code, out, err = _interrupt_at(
        store, ["put", str(folder)], "holding at extract", sig, KEEPUI_TEST_HOLD="extract:6"
    )
    assert code == 130, err
    # Files 1-4 went in as two batches; the fifth waited in the third; the sixth was in hand.
    assert f"interrupted: 4 stored, 3 not started {RESUME}" in err
    assert "Traceback" not in err
    assert _ids(store) == [f"file://{folder / f'n{i}.txt'}" for i in range(4)]
    assert out.split() == _ids(store)  # their ids, on stdout as a finished put prints them
    again = _run(store, "put", str(folder))
    assert again.returncode == 0, again.stderr
    assert "3 indexed, 4 unchanged" in again.stderr
    assert len(_ids(store)) == 7


def test_an_interrupted_put_with_json_lists_what_it_stored(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "store", batch_files=2)
    folder = _folder(tmp_path / "notes")
    code, out, err = _interrupt_at(
        store,
        ["put", str(folder), "--json"],
        "holding at extract",
        KEEPUI_TEST_HOLD="extract:4",
    )
    assert code == 130, err
    error = json.loads(out)["error"]
    assert error["kind"] == "interrupted" and error["message"].startswith("interrupted: 2 stored")
    assert sorted(error["stored"]) == _ids(store) and len(error["stored"]) == 2


def test_interrupt_while_embedding_rolls_the_batch_back(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "store", batch_files=2)
    folder = _folder(tmp_path / "notes")
    code, _, err = _interrupt_at(
        store, ["put", str(folder)], "holding at embed", KEEPUI_TEST_HOLD="embed:2"
    )
    assert code == 130 and f"interrupted: 2 stored, 5 not started {RESUME}" in err, err
    assert "Traceback" not in err
    assert len(_ids(store)) == 2
    assert "5 indexed, 2 unchanged" in _run(store, "put", str(folder)).stderr


def test_interrupt_during_a_commit_lets_it_finish(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "store", batch_files=2)
    folder = _folder(tmp_path / "notes")
    code, _, err = _interrupt_at(
        store, ["put", str(folder)], "holding at commit", KEEPUI_TEST_HOLD="commit:2"
    )
    assert code == 130 and f"interrupted: 4 stored, 3 not started {RESUME}" in err, err
    assert len(_ids(store)) == 4
    found = _run(store, "find", "note number 3", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["hits"], found.stderr
    assert "3 indexed, 4 unchanged" in _run(store, "put", str(folder)).stderr


def test_interrupt_of_one_file_with_json_errors(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "store")
    _run(store, "put", "--text", "an earlier note")
    note = tmp_path / "long.md"
    note.write_text("# Long\n\n" + "words of a long document go on and on. " * 400)
    code, out, err = _interrupt_at(
        store, ["put", str(note), "--json"], "holding at embed", KEEPUI_TEST_HOLD="embed"
    )
    assert code == 130, err
    error = json.loads(out)["error"]
    assert error["kind"] == "interrupted" and "0 stored, 1 not started" in error["message"]
    assert len(_ids(store)) == 1  # the earlier note, and nothing half-written
    assert _run(store, "put", str(note)).returncode == 0
    assert len(_ids(store)) == 2


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")
@pytest.mark.skipif(not DOCS.is_dir(), reason="../shared/data/docs is not on this machine")
def test_interrupt_during_ocr_stops_tesseract(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "store")
    folder = _folder(tmp_path / "mixed", n=2)
    shutil.copy(DOCS / "pdf" / "c02-22.pdf", folder / "scan.pdf")
    # KEEPUI_TEST_TRACE only reports the moments: the signal lands while tesseract runs.
    code, _, err = _interrupt_at(store, ["put", str(folder)], "at ocr", KEEPUI_TEST_TRACE="1")
    assert code == 130 and "interrupted: 0 stored, 3 not started" in err, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert _ids(store) == []
    again = _run(store, "put", str(folder))
    assert again.returncode == 0 and "3 indexed" in again.stderr, again.stderr
    text = json.loads(_run(store, "get", f"file://{folder / 'scan.pdf'}", "--json").stdout)
    assert "scrape our heads" in text["text"]


def test_interrupt_of_a_drain_requeues_the_task_in_hand(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "store")
    for i in range(3):  # longer than summary_max_chars: each queues a summary
        body = " ".join(f"Sentence {j} of note {i} says something different." for j in range(40))
        assert _run(store, "put", "--text", body, "-i", f"long{i}").returncode == 0
    code, _, err = _interrupt_at(
        store,
        ["pending", "--drain"],
        "holding at task summarize",
        KEEPUI_TEST_HOLD="task summarize:2",
    )
    assert code == 130 and "interrupted: 1 task(s) done, 2 not started" in err, err
    queue = json.loads(_run(store, "pending", "--json").stdout)
    assert queue["counts"]["summarize"] == {"queued": 2}
    assert not queue["failures"] and not queue["running"]
    drained = json.loads(_run(store, "pending", "--drain", "--json").stdout)
    assert [t["outcome"] for t in drained["drained"]] == ["done", "done"]


def test_interrupt_of_eval_keeps_the_ingested_batches(tmp_path: Path) -> None:
    beir = tmp_path / "beir"
    beir.mkdir()
    docs = [
        {"_id": f"d{i}", "title": f"doc {i}", "text": f"topic {i % 7} text {i}"} for i in range(300)
    ]
    (beir / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs))
    (beir / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "topic 3"}))
    (beir / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\n")
    store = make_fake_store(tmp_path / "store")
    args = ["eval", "--corpus", str(beir / "corpus.jsonl"), "--queries"]
    args += [str(beir / "queries.jsonl"), "--qrels", str(beir / "qrels.tsv")]
    code, _, err = _interrupt_at(store, args, "holding at embed", KEEPUI_TEST_HOLD="embed:2")
    assert code == 130 and "interrupted: 256 of 300 documents ingested" in err, err
    assert "Traceback" not in err
    again = _run(store, *args, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["docs"] == 300


def test_interrupt_of_reindex_keeps_the_old_model_and_resumes(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "store")
    notes = tmp_path / "notes.jsonl"  # 300 notes in one import: two reindex batches of 256
    header = {"format": "keepui-export", "format_version": 1, "model": "none", "dim": 0}
    rows = [json.dumps({"id": f"n{i}", "text": f"note {i} on topic {i % 9}"}) for i in range(300)]
    notes.write_text("\n".join([json.dumps(header), *rows]) + "\n")
    imported = _run(store, "import", str(notes))
    assert imported.returncode == 0, imported.stderr
    toml = store / "keepui.toml"
    toml.write_text(
        toml.read_text().replace('provider = "fake"', 'provider = "sentence-transformers"')
    )
    code, _, err = _interrupt_at(store, ["reindex"], "holding at embed", KEEPUI_TEST_HOLD="embed:2")
    assert code == 130 and "interrupted: 256 text(s) re-embedded, 44 not started" in err, err
    assert "keepui reindex again" in err and "Traceback" not in err
    refused = _run(store, "find", "topic")  # the index still holds the fake model's vectors
    assert refused.returncode == 2 and "reindex" in refused.stderr
    trace = subprocess.run(
        [keepui_exe(), "reindex", "--json", "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "KEEPUI_TEST_TRACE": "1"},
    )
    assert trace.returncode == 0, trace.stderr
    assert trace.stderr.count("keepui: at embed") == 1  # only the 44 left were embedded
    assert json.loads(trace.stdout)["vectors"] == 300
    found = json.loads(_run(store, "find", "note 7 on topic 7", "--json").stdout)
    assert found["hits"][0]["id"] == "n7"
