"""The operations a Workbench routes: which only read, which write, and how each answer is
decoded when it comes back over the store socket."""

from __future__ import annotations

from typing import Any

from keepui_engine.types import (
    DeleteResult,
    FindResult,
    Item,
    Part,
    PutResult,
    SearchRecord,
    Stats,
    VersionDiff,
    VersionInfo,
)

DECODE: dict[str, Any] = {
    "put_many": lambda r: [PutResult.from_dict(x) for x in r],
    "get": Item.from_dict,
    "history": lambda r: [VersionInfo.from_dict(x) for x in r],
    "parts": lambda r: [Part.from_dict(x) for x in r],
    "find": FindResult.from_dict,
    "find_deep": FindResult.from_dict,
    "list_items": lambda r: [Item.from_dict(x) for x in r],
    "tag": PutResult.from_dict,
    "delete": DeleteResult.from_dict,
    "stats": Stats.from_dict,
    "reindex": Stats.from_dict,
    "why": lambda r: _why_type().from_dict(r),
    "diff": VersionDiff.from_dict,
    "record_search": SearchRecord.from_dict,
    "searches": lambda r: [SearchRecord.from_dict(x) for x in r],
    "judge": lambda r: _judgment().from_dict(r),
    "judgments": lambda r: [_judgment().from_dict(x) for x in r],
    "doctor": lambda r: _doctor_report().from_dict(r),
}
# Operations that check the store themselves, so it opens without the model and lost-writes
# checks (reindex changes the model; doctor reports and repairs what those checks refuse).
SELF_CHECKING = {"reindex", "doctor"}


# Operations that start the store's owner (`keepui serve --auto`) when none runs: they need
# the model, or queue work that its worker then drains (see `owner`).
STARTS_OWNER = {
    "put_many",
    "find",
    "find_deep",
    "reflect",
    "related",
    "tag",
    "delete",
    "analyze",
    "summarize",
    "import_page",
    "work_once",
    "pending_retry",
}

WRITES = {"put_many", "tag", "analyze", "import_page", "judge", "unjudge", "summarize"}
# Operations that only read (their cache and access-time writes are best effort): in an owner
# they run while a writer computes (see work.gate), and a read-only store can answer them. Any
# operation not listed is a write.
READS = {
    "get",
    "history",
    "parts",
    "find",
    "find_deep",
    "list_items",
    "stats",
    "why",
    "diff",
    "searches",
    "judgments",
    "pending",
    "related",
    "facets",
    "reflect",
    "export_page",
}
# What a store that cannot be written still answers (its BM25 base is read as it is, so an
# export need not settle it first).
READ_ONLY_OK = READS | {"export_header"}
for _op in (
    "work_once",
    "pending",
    "pending_retry",
    "pending_purge",
    "analyze",
    "reflect",
    "related",
    "summarize",
    "export_header",
    "export_page",
    "import_page",
    "facets",
    "unjudge",
):
    DECODE[_op] = lambda r: r


def _judgment() -> Any:
    from keepui_engine.search.judgments import Judgment

    return Judgment


def _doctor_report() -> Any:
    from keepui_engine.doctor import DoctorReport

    return DoctorReport


def _why_type() -> Any:
    from keepui_engine.search.why import WhyResult

    return WhyResult


def encode(result: Any) -> Any:
    if isinstance(result, list):
        return [encode(x) for x in result]
    return result.to_dict() if hasattr(result, "to_dict") else result
