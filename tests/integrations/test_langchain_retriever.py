"""KeepuiRetriever: the matched text as page_content, the hit's address and scores as metadata."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document

from keepui.agents.langchain import KeepuiRetriever
from keepui_engine import PutSpec, Workbench


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir (through wb) run on DuckDB and on PostgreSQL."""
    return backend_dir


def words(n: int, stem: str) -> str:
    return " ".join(f"{stem}{i % 7}" for i in range(n))


ATLAS = "\n\n".join(
    [
        "# Harbour\n" + words(200, "boat") + " lighthouse keeper",
        "# Mountains\n" + words(200, "peak") + " glacier crevasse",
        "# Kitchen\n" + words(200, "pan") + " sourdough starter",
    ]
)


def seed(wb: Workbench) -> None:
    wb.put_many(
        [
            PutSpec(ATLAS, id="atlas", tags=["kind=guide"]),
            PutSpec("Bake the sourdough loaf at 230 degrees", id="bake", tags=["kind=note"]),
            PutSpec("Glacier walks need crampons and a guide", id="walk", tags=["kind=note"]),
        ]
    )


def test_documents_carry_the_matched_text_and_provenance(wb: Workbench) -> None:
    seed(wb)
    docs = KeepuiRetriever(workbench=wb, k=3, mode="bm25").invoke("glacier crevasse")
    first = docs[0]
    assert isinstance(first, Document)
    assert first.metadata["id"] == "atlas" and first.metadata["matched"] == "atlas@P{2}"
    assert first.page_content == wb.get("atlas@P{2}").text
    assert "glacier crevasse" in first.page_content and "lighthouse" not in first.page_content
    assert first.metadata["part"]["title"] == "Mountains"
    scores = first.metadata["scores"]
    assert scores["final"] == first.metadata["score"] and scores["bm25_rank"] == 1
    assert first.metadata["tags"]["kind"] == "guide" and first.metadata["updated"].endswith("Z")
    whole = next(d for d in docs if d.metadata["id"] == "walk")
    assert whole.page_content == "Glacier walks need crampons and a guide"
    assert whole.metadata["part"] is None and whole.metadata["matched"] == "walk"


def test_tag_filter_k_and_min_score(wb: Workbench) -> None:
    seed(wb)
    notes = KeepuiRetriever(workbench=wb, k=5, filter_tags=["kind=note"]).invoke("sourdough")
    assert {d.metadata["id"] for d in notes} <= {"bake", "walk"}
    assert notes[0].metadata["id"] == "bake"
    assert len(KeepuiRetriever(workbench=wb, k=1).invoke("sourdough glacier")) == 1
    assert KeepuiRetriever(workbench=wb, min_score=10.0).invoke("sourdough") == []


def test_search_kwargs_of_one_call(wb: Workbench) -> None:
    seed(wb)
    retriever = KeepuiRetriever(workbench=wb, k=3)
    assert len(retriever.invoke("sourdough glacier")) == 3
    assert len(retriever.invoke("sourdough glacier", k=1)) == 1
    notes = retriever.invoke("sourdough glacier", filter_tags=["kind=note"], mode="bm25")
    assert {d.metadata["id"] for d in notes} == {"bake", "walk"}
    assert retriever.invoke("sourdough", min_score=10.0) == []
    assert len(retriever.invoke("sourdough glacier")) == 3  # the fields are unchanged
    with pytest.raises(TypeError, match="k, filter_tags, mode, min_score"):
        retriever.invoke("sourdough", top_k=1)
    with pytest.raises(ValueError, match="k=0"):
        retriever.invoke("sourdough", k=0)


async def test_async_search_kwargs(wb: Workbench) -> None:
    seed(wb)
    docs = await KeepuiRetriever(workbench=wb, k=3).ainvoke("bake sourdough loaf", k=1)
    assert [d.metadata["id"] for d in docs] == ["bake"]


async def test_async_retrieval(wb: Workbench) -> None:
    seed(wb)
    docs = await KeepuiRetriever(workbench=wb, k=2).ainvoke("bake sourdough loaf")
    assert docs[0].metadata["id"] == "bake"
    assert docs[0].page_content == "Bake the sourdough loaf at 230 degrees"
