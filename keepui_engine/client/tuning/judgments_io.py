"""`keepui judgments import`: TREC/BEIR qrels and queries files read back as judgments, the
inverse of `keepui judgments export`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keepui_engine.core.errors import UsageError
from keepui_engine.search.judgments import GRADES

if TYPE_CHECKING:
    from keepui_engine.client.workbench import Workbench

BATCH = 5000  # judgments per call (one transaction each)
EXAMPLES = 10


@dataclass(frozen=True)
class JudgmentsImport:
    """What an import did.

    Attributes:
        recorded: Judgments recorded (new or replacing one of the same query and id).
        qrels: Judgment lines read from the qrels file.
        queries: Distinct queries those lines judge that the queries file has.
        missing_ids: Document ids the qrels name that the store does not have (their
            judgments are not recorded).
        unknown_queries: Query ids of the qrels the queries file lacks (not recorded).
    """

    recorded: int
    qrels: int
    queries: int
    missing_ids: list[str] = field(default_factory=list)
    unknown_queries: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: counts, and the first few missing ids and unknown query ids."""
        return {
            "recorded": self.recorded,
            "qrels": self.qrels,
            "queries": self.queries,
            "missing_ids": len(self.missing_ids),
            "missing_examples": self.missing_ids[:EXAMPLES],
            "unknown_queries": len(self.unknown_queries),
            "unknown_examples": self.unknown_queries[:EXAMPLES],
        }


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise UsageError(f"cannot read {path}: {why}. Check the path.") from exc


def read_qrels(path: Path) -> list[tuple[str, str, int]]:
    """(query id, document id, grade) of each line: BEIR's `query-id corpus-id score` (tab
    separated, an optional header) or TREC's `qid 0 docid grade`.

    Raises:
        UsageError: A line of another shape, or a grade outside 0..3 (naming the line).
    """
    out = []
    for n, line in enumerate(_lines(path), 1):
        parts = line.split()
        if not parts or line.lstrip().startswith("#"):
            continue
        if n == 1 and not parts[-1].lstrip("-").isdigit():
            continue  # the header
        if len(parts) not in (3, 4) or not parts[-1].lstrip("-").isdigit():
            raise UsageError(
                f"{path}:{n}: expected `query-id corpus-id score` (BEIR) or "
                "`qid 0 docid grade` (TREC)."
            )
        grade = int(parts[-1])
        if grade not in GRADES:
            raise UsageError(
                f"{path}:{n}: grade {grade}; keepui's grades are 0 (not relevant) to 3 (the "
                "answer). Map the file's grades onto 0..3 first."
            )
        out.append((parts[0], parts[-2], grade))
    return out


def read_queries(path: Path) -> dict[str, str]:
    """Query id -> text of a BEIR queries.jsonl (`_id`, `text`).

    Raises:
        UsageError: A line that is not a JSON object with `_id` and `text`.
    """
    out = {}
    for n, line in enumerate(_lines(path), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict) or "_id" not in row or "text" not in row:
            raise UsageError(
                f'{path}:{n}: expected a JSON object with "_id" and "text" (BEIR queries.jsonl).'
            )
        out[str(row["_id"])] = str(row["text"])
    return out


def import_files(wb: Workbench, qrels: Path, queries: Path) -> JudgmentsImport:
    """Record the judgments of a qrels file whose queries the queries file holds.

    Raises:
        UsageError: A file cannot be read or has a bad line; nothing is recorded then.
    """
    lines = read_qrels(qrels)
    texts = read_queries(queries)
    unknown = sorted({q for q, _, _ in lines if q not in texts})
    rows = [[texts[q], d, g] for q, d, g in lines if q in texts]
    recorded, missing = 0, set()
    with wb.session():
        for start in range(0, len(rows), BATCH):
            got = wb.call("judge_many", rows=rows[start : start + BATCH])
            recorded += int(got["recorded"])
            missing.update(got["missing"])
    judged = {texts[q] for q, d, _ in lines if q in texts and d not in missing}
    return JudgmentsImport(recorded, len(lines), len(judged), sorted(missing), unknown)
