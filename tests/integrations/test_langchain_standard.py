"""KeepuiRetriever against langchain_tests' standard RetrieversIntegrationTests (all of them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests
from support import make_fake_store

from keepui.agents.langchain import KeepuiRetriever
from keepui_engine import PutSpec, Workbench, open_workbench

NOTES = [
    "Sourdough needs a ripe starter and a long cold proof.",
    "A sourdough loaf bakes at 230 degrees with steam.",
    "Rye sourdough stays dense; feed the starter twice.",
    "Glacier walks need crampons and a guide.",
    "The night train to Lisbon leaves at ten.",
]


class TestKeepuiRetrieverStandard(RetrieversIntegrationTests):
    """A fake-embedder store of five notes, three of which share the example query's word."""

    workbench: Workbench

    @pytest.fixture(autouse=True)
    def _store(self, tmp_path: Path) -> Iterator[None]:
        with open_workbench(make_fake_store(tmp_path / "store"), own=True) as wb:
            wb.put_many([PutSpec(text, id=f"note{i}") for i, text in enumerate(NOTES)])
            self.workbench = wb
            yield

    @property
    def retriever_constructor(self) -> type[KeepuiRetriever]:
        return KeepuiRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, object]:
        return {"workbench": self.workbench}

    @property
    def retriever_query_example(self) -> str:
        return "sourdough starter"
