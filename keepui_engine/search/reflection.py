"""Reflection: a summary or the key points of a query's top hits (recall-kit's last step).

With no LLM configured it is extractive: the hits' real sentences (the summary candidates of
`providers/summary/candidates.py`) are scored by their similarity to the query (three
quarters) and to the centre of all of them (one quarter), with a small prior for higher-ranked
hits, and picked by maximal marginal relevance so two near-identical sentences are not both
taken. A summary is the best three in reading order (hit rank, then position); key points are
three to five, best first, each citing its source. With an LLM provider ([summarization]
provider = openai-compatible or mlx), the passages and the query go to the model with the
seed's prompts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keepui_engine.core.errors import UsageError
from keepui_engine.core.types import _Serialisable
from keepui_engine.providers.summary.candidates import candidates

KINDS = ("summary", "key-points")
SUMMARY_SENTENCES = 3
MIN_POINTS, MAX_POINTS = 3, 5
MAX_PER_PASSAGE = 80  # sentences of one passage considered (a 300-page PDF is not read whole)
MMR_LAMBDA = 0.7
RANK_PRIOR = 0.02
LLM_MAX_CHARS = 1200
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")

EmbedFn = Callable[[list[str]], Any]


@dataclass(frozen=True)
class Reflection(_Serialisable):
    """What the top hits for a query say, in a few sentences.

    Attributes:
        query: The query.
        kind: `summary` or `key-points`.
        text: The summary, or the key points one per line (`- point [Source: ADDRESS]`).
        points: Each sentence used, {"text", "source"} (source None when an LLM wrote it).
        sources: The ids of the hits reflected on, best first.
        method: `extractive` or the LLM provider's name.
        stored: The id of the reflection stored back (`--store-back`), else None.
        notes: Remarks (e.g. no hits).
    """

    query: str
    kind: str
    text: str
    points: list[dict[str, Any]]
    sources: list[str]
    method: str
    stored: str | None = None
    notes: list[str] = field(default_factory=list)


def check_kind(kind: str) -> str:
    """The kind, or a UsageError naming the known ones."""
    if kind not in KINDS:
        raise UsageError(f"--kind {kind!r}: choose one of {', '.join(KINDS)}.")
    return kind


@dataclass(frozen=True)
class _Candidate:
    text: str
    source: str
    rank: int
    position: int


def _candidates(passages: list[dict[str, Any]]) -> list[_Candidate]:
    real: list[_Candidate] = []
    fragments: list[_Candidate] = []
    seen: set[str] = set()
    for rank, p in enumerate(passages):
        found, is_real = candidates(str(p.get("text") or ""))
        for pos, sentence in enumerate(found[:MAX_PER_PASSAGE]):
            key = " ".join(sentence.casefold().split())
            if key in seen:
                continue
            seen.add(key)
            (real if is_real else fragments).append(
                _Candidate(sentence, str(p.get("matched") or p["id"]), rank, pos)
            )
    return real or fragments


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def _mmr(scores: np.ndarray, vectors: np.ndarray, k: int) -> list[int]:
    """Indices picked by maximal marginal relevance, best first."""
    chosen: list[int] = []
    left = list(range(len(scores)))
    while left and len(chosen) < k:
        if chosen:
            overlap = (vectors[left] @ vectors[chosen].T).max(axis=1)
            value = MMR_LAMBDA * scores[left] - (1 - MMR_LAMBDA) * overlap
        else:
            value = scores[left]
        pick = left[int(np.argmax(value))]
        chosen.append(pick)
        left.remove(pick)
    return chosen


def extractive(
    embed: EmbedFn, query: str, passages: list[dict[str, Any]], kind: str
) -> dict[str, Any]:
    """The summary or key points of `passages` (each {"id", "matched", "text"}) for `query`."""
    cands = _candidates(passages)
    if not cands:
        return {"text": "", "points": [], "method": "extractive"}
    vectors = _unit(np.asarray(embed([query, *[c.text for c in cands]]), np.float32))
    q, sentences = vectors[0], vectors[1:]
    centre = _unit(sentences.mean(axis=0, keepdims=True))[0]
    ranks = np.array([c.rank for c in cands], np.float32)
    scores = 0.75 * (sentences @ q) + 0.25 * (sentences @ centre) - RANK_PRIOR * ranks
    if kind == "summary":
        picked = sorted(
            _mmr(scores, sentences, SUMMARY_SENTENCES),
            key=lambda i: (cands[i].rank, cands[i].position),
        )
        text = " ".join(cands[i].text for i in picked)
    else:
        picked = _mmr(scores, sentences, MAX_POINTS)
        best = float(scores[picked[0]])
        floor = best - abs(best) * 0.5
        picked = [i for n, i in enumerate(picked) if n < MIN_POINTS or scores[i] >= floor]
        text = "\n".join(f"- {cands[i].text} [Source: {cands[i].source}]" for i in picked)
    points = [{"text": cands[i].text, "source": cands[i].source} for i in picked]
    return {"text": text, "points": points, "method": "extractive"}


def llm_messages(query: str, passages: list[dict[str, Any]], kind: str) -> list[dict[str, str]]:
    """The seed's reflection prompts, with each memory and its source."""
    memories = "\n\n".join(
        f"[Source: {p.get('matched') or p['id']}]\n{str(p.get('text') or '')[:6000]}"
        for p in passages
    )
    ask = (
        f"Provide a concise summary relevant to: {query}"
        if kind == "summary"
        else f"Extract 3-5 key points relevant to: {query}\nWrite one point per line, each "
        "starting with '- '."
    )
    return [
        {
            "role": "system",
            "content": "You reflect on a person's stored memories. Use only what they say; "
            "reply with the answer only, no preamble.",
        },
        {"role": "user", "content": f"Based on these memories:\n{memories}\n\n{ask}"},
    ]


def from_llm(reply: str, kind: str, method: str) -> dict[str, Any]:
    """The model's reply as a reflection (key points split into lines)."""
    if kind == "summary":
        text = " ".join(reply.split())
        return {"text": text, "points": [{"text": text, "source": None}], "method": method}
    lines = [_BULLET.sub("", line).strip() for line in reply.splitlines()]
    points = [line for line in lines if line][:MAX_POINTS]
    return {
        "text": "\n".join(f"- {p}" for p in points),
        "points": [{"text": p, "source": None} for p in points],
        "method": method,
    }
