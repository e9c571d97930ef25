"""With the real model: summaries of the shared real documents quote whole sentences of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keepui_engine.core.config import Settings
from keepui_engine.ingest.extract import extract
from keepui_engine.ingest.extracted import Limits
from keepui_engine.providers import create_embedder
from keepui_engine.providers.summary import SummaryConfig, create_summarizer
from keepui_engine.providers.summary.candidates import candidates
from keepui_engine.providers.summary.text import normalize, split_sentences

pytestmark = pytest.mark.model

DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"
SKIP = {".md", ".mp3", ".ogg", ".flac", ".jpg", ".png"}  # no prose inside


@pytest.fixture(scope="module")
def summarize(tmp_path_factory: pytest.TempPathFactory) -> Any:
    embed = create_embedder(Settings(store=tmp_path_factory.mktemp("store"))).embed
    return create_summarizer(SummaryConfig(), embed).summarize


def test_documents_with_five_sentences_get_two_whole_ones_and_no_prefix(summarize: Any) -> None:
    if not DOCS.is_dir():
        pytest.skip(f"shared documents {DOCS} are absent (expected ../shared/data/docs)")
    checked = []
    for path in sorted(p for p in DOCS.rglob("*") if p.is_file() and p.suffix not in SKIP):
        text = extract(path.read_bytes(), name=path.name, limits=Limits()).text
        real, is_real = candidates(text)
        if not is_real or len(real) < 5:
            continue
        out = summarize(text)
        flat = normalize(text)
        whole = [s for s in split_sentences(out) if s in real and s in flat]
        assert len(whole) >= 2, (path.name, out)
        assert not flat.startswith(out.rstrip("…")), (path.name, out)
        assert len(set(whole)) == len(whole), (path.name, out)
        checked.append(path.name)
    # The two Wikipedia pages and the Federal Register notice at the least.
    assert len(checked) >= 3, checked
