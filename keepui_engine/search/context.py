"""Context injection: the top passages for a query, formatted for a prompt within a token budget.

As OpenJarvis's memory injects context: search, drop hits under `min_score`, then fill the
budget in rank order. A token is a whitespace-separated word (the seed chunker's count), and
the `[Source: ADDRESS]` marker after each passage counts too, so the formatted text never has
more words than the budget. A passage that does not fit whole is cut after its last sentence
that fits (never inside a sentence); when not even its first sentence fits, it and every
passage after it are dropped (rank order is kept: a lower hit never jumps a higher one).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from keepui_engine.core.types import FindResult, Hit, _Serialisable
from keepui_engine.search.pipeline import threshold

HEADER = (
    "The following context was retrieved from the knowledge base.\n"
    "Use it to inform your response, citing sources where applicable:"
)
TOP_K, MIN_SCORE, MAX_TOKENS = 5, 0.1, 2048  # the seed's ContextConfig defaults

# A sentence ends at . ! ? or … (closing quotes and brackets included) before whitespace, or
# at a blank line. Not after a common abbreviation or a single-letter initial.
_END = re.compile(r"[.!?…][\"'”’)\]]*(?=\s)|\n[ \t]*\n")
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|et al|vs|cf|Dr|Mr|Mrs|Ms|Prof|St|Fig|No|Vol|pp|approx|Inc|Ltd)\.|"
    r"(?:^|\s)[A-Z]\.)$"
)


@dataclass(frozen=True)
class Passage(_Serialisable):
    """One passage of a context.

    Attributes:
        id: The document id.
        matched: The address that matched and is cited (`ID`, `ID@V{N}`, `ID@P{N}`).
        text: The passage (the matched part's text, else the matched version's), perhaps cut
            after a sentence.
        score: The hit's final score.
        tokens: Words of the passage and its `[Source: …]` marker.
        truncated: Whether sentences at the end were left out to fit the budget.
    """

    id: str
    matched: str
    text: str
    score: float
    tokens: int
    truncated: bool = False


@dataclass(frozen=True)
class ContextResult(_Serialisable):
    """Passages for a prompt.

    Attributes:
        query: The query.
        passages: The passages that fit, best first.
        tokens: Words in `text` (never more than `budget`).
        budget: The token budget asked for.
        dropped: Passages above `min_score` left out because the budget was spent.
        text: The formatted context: each passage followed by its `[Source: ADDRESS]` line.
        below_min_score: Hits left out because their score was under `min_score`.
        notes: Remarks (e.g. why nothing fitted).
    """

    query: str
    passages: list[Passage]
    tokens: int
    budget: int
    dropped: int
    text: str
    below_min_score: int = 0
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ContextResult:
        """Rebuild, including the nested passages."""
        raw: Any = data.get("passages") or []
        passages = [Passage.from_dict(p) for p in raw]
        rest = {k: v for k, v in data.items() if k != "passages"}
        return super().from_dict({**rest, "passages": passages})  # type: ignore[misc,no-any-return]


def count_tokens(text: str) -> int:
    """Whitespace-separated words."""
    return len(text.split())


def marker(address: str) -> str:
    """The citation line after a passage."""
    return f"[Source: {address}]"


def sentence_ends(text: str) -> list[int]:
    """Offsets just after each sentence of `text` (the last one is the end of the text)."""
    ends = []
    for m in _END.finditer(text):
        if m.group().startswith("\n"):
            ends.append(m.start())
        elif not _ABBREV.search(text[: m.start() + 1]):
            ends.append(m.end())
    stripped = len(text.rstrip())
    return sorted({e for e in ends if 0 < e < stripped} | {stripped})


def fit(text: str, address: str, budget: int) -> tuple[str, int, bool] | None:
    """The longest run of whole sentences from the start of `text` that fits with its marker.

    Returns:
        (text, tokens with the marker, truncated), or None when not even one sentence fits.
    """
    overhead = count_tokens(marker(address))
    whole = count_tokens(text)
    if whole + overhead <= budget:
        return text.strip(), whole + overhead, False
    best = None
    for end in sentence_ends(text):
        piece = text[:end].strip()
        used = count_tokens(piece) + overhead
        if used > budget:
            break
        best = (piece, used, True)
    return best if best and best[0] else None


def with_next_passages(hits: list[Hit], min_score: float) -> list[Hit]:
    """The hits in their order, each document's next best passages (`Hit.passages`) placed
    among them by score: a second passage that outscores the next document comes before it.
    A passage under `min_score` is left out."""
    out: list[Hit] = []
    waiting: list[Hit] = []
    for hit in hits:
        waiting.sort(key=lambda h: -h.score)
        while waiting and waiting[0].score > hit.score:
            out.append(waiting.pop(0))
        out.append(hit)
        base = hit.matched.split("@P{")[0]
        for extra in hit.passages or []:
            if extra["score"] >= min_score:
                part = {"index": extra["index"], "title": None, "excerpt": ""}
                waiting.append(
                    replace(
                        hit,
                        matched=f"{base}@P{{{extra['index']}}}",
                        part=part,
                        score=float(extra["score"]),
                        passages=None,
                    )
                )
    return out + sorted(waiting, key=lambda h: -h.score)


def build(
    found: FindResult,
    text_of: Callable[[Hit], str],
    *,
    min_score: float = MIN_SCORE,
    max_tokens: int = MAX_TOKENS,
    header: bool = False,
) -> ContextResult:
    """Fill the budget with the hits' passages in rank order.

    Args:
        found: The search (its hits best first).
        text_of: The passage text of a hit (its part's text, else its version's).
        min_score: Leave out hits whose final score is below this.
        max_tokens: The most words the formatted context may have.
        header: Start with the seed's instruction to the model (its words count).
    """
    kept, below = threshold(found.hits, min_score)
    notes: list[str] = []
    used = count_tokens(HEADER) if header else 0
    passages: list[Passage] = []
    entries = with_next_passages(kept, min_score)
    for n, hit in enumerate(entries):
        got = fit(text_of(hit), hit.matched, max_tokens - used)
        if got is None:
            notes.append(
                f"{len(entries) - n} passage(s) did not fit in {max_tokens} tokens "
                f"(the next one, {hit.matched}, has no sentence short enough)"
            )
            break
        text, tokens, cut = got
        passages.append(Passage(hit.id, hit.matched, text, round(hit.score, 6), tokens, cut))
        used += tokens
    if header and not passages:
        used = 0
    blocks = [f"{p.text}\n{marker(p.matched)}" for p in passages]
    body = "\n\n".join(([HEADER] if header and passages else []) + blocks)
    if below:
        notes.append(f"{below} hit(s) scored under --min-score {min_score:g}")
    return ContextResult(
        found.query,
        passages,
        count_tokens(body),
        max_tokens,
        len(entries) - len(passages),
        body,
        below,
        notes,
    )
