"""`keepui analyze` on files keeps their pages, slides and headings (real subprocesses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import run_cli as run

DOCS = Path(__file__).resolve().parents[3] / "shared" / "data" / "docs"
needs_docs = pytest.mark.skipif(
    not DOCS.is_dir(), reason="../shared/data/docs (the real PDF/PPTX fixtures) is absent"
)


def ok(store: Path, *args: str) -> dict[str, Any]:
    result = run(store, *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def parts(store: Path, doc_id: str) -> list[tuple[str, str | None, str]]:
    got = ok(store, "get", doc_id, "--parts")["parts"]
    return [(p["kind"], p["title"], p["position"]) for p in got]


def put(store: Path, path: Path) -> str:
    result = run(store, "put", str(path))
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def analyze(store: Path, doc_id: str, *flags: str) -> str:
    return str(ok(store, "analyze", doc_id, *flags)["result"])


@needs_docs
def test_pdf_pages_and_pptx_slides_survive_analyze(store_dir: Path) -> None:
    pdf = put(store_dir, DOCS / "pdf" / "federal-register-2020-17221.pdf")
    deck = put(store_dir, DOCS / "pptx" / "ph-populated-placeholders.pptx")
    pages, slides = parts(store_dir, pdf), parts(store_dir, deck)
    assert {kind for kind, _, _ in pages} == {"page"}
    numbers = {int(pos.split()[1].rstrip(",")) for _, _, pos in pages}
    assert numbers == set(range(1, 16))  # every one of the 15 pages, long ones in windows
    assert [pos.split(",")[0] for _, _, pos in slides] == ["slide 5", "slide 6", "slide 7"]
    for doc_id, before in ((pdf, pages), (deck, slides)):
        assert analyze(store_dir, doc_id) == "unchanged since the last analyze"
        assert analyze(store_dir, doc_id, "--force") == f"{len(before)} part(s)"
        assert parts(store_dir, doc_id) == before
    assert "queued" in ok(store_dir, "analyze", pdf, "--queue", "--force")
    assert run(store_dir, "pending", "--drain").returncode == 0
    assert parts(store_dir, pdf) == pages


def test_docx_headings_survive_analyze_after_a_tag_change(store_dir: Path, tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    titles = ["Harbour", "Mountains", "Kitchen"]
    for n, title in enumerate(titles):
        document.add_heading(title, level=1)
        document.add_paragraph(" ".join(f"{title.lower()}{i % 11}" for i in range(250 + n)))
    document.save(str(tmp_path / "handbook.docx"))
    doc_id = put(store_dir, tmp_path / "handbook.docx")
    before = parts(store_dir, doc_id)
    assert [title for _, title, _ in before] == titles
    assert run(store_dir, "tag", doc_id, "-t", "topic=places").returncode == 0
    assert analyze(store_dir, doc_id) == "unchanged since the last analyze"
    assert analyze(store_dir, doc_id, "--force") == "3 part(s)"
    assert parts(store_dir, doc_id) == before
