"""`keepui put FILE | DIR | URL` through real subprocesses, with real files and a local server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support import make_fake_store
from support import run_cli as run

DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"
needs_docs = pytest.mark.skipif(not DOCS.is_dir(), reason=f"{DOCS} (shared test files) is absent")


def put_json(store: Path, *args: str) -> dict[str, object]:
    got = run(store, "put", *args, "--json")
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)  # type: ignore[no-any-return]


def get_json(store: Path, *args: str) -> dict[str, object]:
    got = run(store, "get", *args, "--json")
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)  # type: ignore[no-any-return]


@needs_docs
def test_formats_give_text_tags_and_parts(store_dir: Path) -> None:
    audio = put_json(store_dir, str(DOCS / "audio" / "silence-44-s-v1.mp3"), "-t", "artist=me")
    item = get_json(store_dir, str(audio["id"]))
    tags = item["tags"]
    assert tags["title"] == "Silence" and tags["artist"] == "me"  # the user's tag wins
    assert tags["_content_type"] == "audio/mpeg" and tags["_file_size"] == 15070
    assert "_file_mtime" in tags and str(tags["_source_uri"]).startswith("file://")
    assert "Silence" in str(item["text"])
    photo = put_json(store_dir, str(DOCS / "images" / "flower.jpg"))
    assert "PowerShot S40" in str(get_json(store_dir, str(photo["id"]))["tags"]["camera"])
    deck = put_json(store_dir, str(DOCS / "pptx" / "ph-populated-placeholders.pptx"))
    parts = get_json(store_dir, str(deck["id"]), "--parts")["parts"]
    assert [p["position"].split(",")[0] for p in parts] == ["slide 5", "slide 6", "slide 7"]
    text = str(get_json(store_dir, str(deck["id"]))["text"])  # each part's span is its text
    assert all(text[slice(*p["span"])].split() == p["text"].split() for p in parts)
    pdf = put_json(store_dir, str(DOCS / "pdf" / "federal-register-2020-17221.pdf"))
    pages = get_json(store_dir, str(pdf["id"]), "--parts")["parts"]
    assert {p["position"].split(",")[0] for p in pages} >= {f"page {n}" for n in range(1, 16)}  # type: ignore[union-attr]
    again = put_json(store_dir, str(DOCS / "pdf" / "federal-register-2020-17221.pdf"))
    assert again["action"] == "unchanged"
    listed = run(store_dir, "get", str(pdf["id"]), "--parts")
    assert listed.returncode == 0 and "@P{1}" in listed.stdout


@needs_docs
@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")
def test_the_scanned_page_is_read_by_ocr_and_found_by_a_phrase(store_dir: Path) -> None:
    got = put_json(store_dir, str(DOCS / "pdf" / "c02-22.pdf"))
    assert any("OCR" in n for n in got["notes"])  # type: ignore[union-attr]
    found = run(store_dir, "find", "stooping down so the branches would not scrape", "--ids")
    assert found.stdout.split()[0] == got["id"]


def test_without_tesseract_the_scan_is_stored_with_a_note(store_dir: Path) -> None:
    if not DOCS.is_dir():
        pytest.skip(f"{DOCS} is absent")
    env = {**os.environ, "PATH": "/nonexistent"}
    got = subprocess.run(
        [sys.executable, "-m", "keepui", "put", str(DOCS / "pdf" / "c02-22.pdf"), "--json"]
        + ["--store", str(store_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert got.returncode == 0, got.stderr
    report = json.loads(got.stdout)
    assert any("OCR unavailable" in n and "tesseract" in n for n in report["notes"])
    assert "OCR unavailable" in got.stderr


def test_bad_files_fail_clearly_and_lose_nothing(store_dir: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.md"
    good.write_text("# Title\nsome words worth keeping\n")
    assert run(store_dir, "put", str(good)).returncode == 0
    cases = {
        "empty.txt": (b"", "empty"),
        "broken.pdf": (b"%PDF-1.7\n" + os.urandom(2000), "broken.pdf"),
        "fake.docx": (b"this is not a zip", "fake.docx"),
        "latin.txt": (b"\xff\xfe\x00\x00" + os.urandom(64), "latin.txt"),
    }
    for name, (data, word) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        got = run(store_dir, "put", str(path))
        assert got.returncode != 0 and word in got.stderr, (name, got.stderr)
        assert "Traceback" not in got.stderr
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(loop)
    got = run(store_dir, "put", str(loop))
    assert got.returncode != 0 and "symlink loop" in got.stderr
    stats = json.loads(run(store_dir, "stats", "--json").stdout)
    assert stats["items"] == 1


def test_directory_walk_reports_every_outcome(store_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "tree"
    for rel, data in {
        "a.md": b"# Alpha\nthe first note",
        "sub/b.txt": b"the second note",
        "sub/c.log": b"a log line",
        ".hidden/x.txt": b"hidden",
        ".dotfile": b"hidden too",
        ".git/config": b"[core]",
        "node_modules/m.js": b"module",
        "env/pyvenv.cfg": b"home = /usr",
        "env/lib.py": b"print(1)",
        "tool.exe": b"MZ\x00\x00binary",
        "empty.txt": b"",
        "blob.dat2": b"\x00\x01\x02\x03" * 100,
    }.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "loop").symlink_to(root / "loop")
    got = run(store_dir, "put", str(root), "-x", "*.log", "--json")
    assert got.returncode == 1, got.stderr
    report = json.loads(got.stdout)
    assert report["schema"] == 1
    indexed = sorted(Path(e["source"]).name for e in report["indexed"])
    assert indexed == ["a.md", "b.txt"]
    skipped = {Path(e["source"]).name: e["reason"] for e in report["skipped"]}
    assert "binary" in skipped["tool.exe"] and "binary" in skipped["blob.dat2"]
    failed = {Path(e["source"]).name: e["reason"] for e in report["failed"]}
    assert set(failed) == {"empty.txt", "loop"} and "empty" in failed["empty.txt"]
    assert report["counts"] == {"indexed": 2, "unchanged": 0, "skipped": 2, "failed": 2}
    (store_dir / "ignore.txt").write_text("sub/*\n")
    assert run(store_dir, "put", str(store_dir / "ignore.txt"), "-i", ".ignore").returncode == 0
    again = json.loads(run(store_dir, "put", str(root), "--json").stdout)
    assert [Path(e["source"]).name for e in again["unchanged"]] == ["a.md"]
    assert again["indexed"] == []
    human = run(store_dir, "put", str(root))
    assert "FAILED" in human.stderr and "empty.txt" in human.stderr


def test_ten_thousand_tiny_files_finish_with_a_correct_report(
    store_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "many"
    for i in range(100):
        folder = root / f"d{i:02d}"
        folder.mkdir(parents=True)
        for j in range(100):
            (folder / f"n{j:02d}.txt").write_text(f"tiny note {i} {j}")
    got = run(store_dir, "put", str(root), "--json")
    assert got.returncode == 0, got.stderr[-2000:]
    assert json.loads(got.stdout)["counts"]["indexed"] == 10000
    assert json.loads(run(store_dir, "stats", "--json").stdout)["items"] == 10000


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/page.html":
            body = (
                b"<html><head><title>Tide tables</title><script>var x=1;</script></head>"
                b"<body><nav>menu menu</nav><p>High tide at noon in the harbour.</p></body></html>"
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path.startswith("/loop"):
            self.send_response(302)
            self.send_header("Location", f"/loop{len(self.path)}")
            self.end_headers()
        elif self.path == "/big":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"x" * 3_000_000)
        elif self.path == "/slow":
            self.server.release.wait(10)  # type: ignore[attr-defined]
            self.send_response(200)
            self.end_headers()
        else:
            self.send_response(404)
            self.end_headers()


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.release = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.release.set()  # type: ignore[attr-defined]
    httpd.shutdown()


def test_urls_are_fetched_with_timeout_size_and_redirect_caps(tmp_path: Path, server: str) -> None:
    store = make_fake_store(tmp_path / "s")
    text = (store / "keepui.toml").read_text()
    text = text.replace("timeout_s = 20", "timeout_s = 1").replace("max_mb = 50", "max_mb = 1")
    (store / "keepui.toml").write_text(text)
    got = put_json(store, f"{server}/page.html")
    item = get_json(store, str(got["id"]))
    assert got["id"] == f"{server}/page.html" and item["tags"]["title"] == "Tide tables"
    assert "High tide" in str(item["text"]) and "var x" not in str(item["text"])
    for path, word in (
        ("/missing", "404"),
        ("/loop", "redirect"),
        ("/big", "cap"),
        ("/slow", "timed out"),
    ):
        bad = run(store, "put", f"{server}{path}")
        assert bad.returncode != 0 and word in bad.stderr, (path, bad.stderr)
    assert json.loads(run(store, "stats", "--json").stdout)["items"] == 1
