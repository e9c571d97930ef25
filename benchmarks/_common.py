"""Shared parts of the benchmarks: seeded synthetic notes and queries, timing, table + JSON output.

Not a benchmark itself. Every script imports it as `_common` (the scripts run from any cwd
because Python puts the script's own directory on sys.path).
"""

from __future__ import annotations

import json
import os
import platform
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# A benchmark measures the engine in its own process: a Workbench opened here must not hand
# its calls to an owner it starts (an owner started by hand still serves them, as for users).
# bench_cli.py takes this out of the environment of the commands it times through an owner.
os.environ.setdefault("KEEPUI_NO_SERVER", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
RESULTS = ROOT / "results"
MODEL = "all-MiniLM-L6-v2"

PEOPLE = [
    "Ana",
    "Ben",
    "Chloe",
    "Dmitri",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kemi",
    "Liam",
    "Mei",
    "Nora",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
]
DAYS = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "the weekend",
    "next week",
    "the end of the month",
    "the sprint review",
    "the quarterly planning",
]
# topic -> (things, verbs, conditions, benefits)
TOPICS: dict[str, tuple[list[str], list[str], list[str], list[str]]] = {
    "databases": (
        [
            "query planner",
            "index",
            "write-ahead log",
            "migration",
            "connection pool",
            "schema",
            "backup job",
            "replica",
            "vacuum run",
            "join order",
        ],
        ["rebuild", "partition", "benchmark", "tune", "roll back"],
        [
            "the table grows past a million rows",
            "two writers commit at once",
            "the disk is almost full",
            "the replica lags behind",
        ],
        ["faster reports", "fewer lock timeouts", "cheaper storage"],
    ),
    "search": (
        [
            "embedding model",
            "ranking function",
            "stemmer",
            "synonym list",
            "vector index",
            "relevance test set",
            "query parser",
            "recency boost",
        ],
        ["re-embed", "evaluate", "normalise", "cache", "re-rank"],
        ["the query has typos", "documents are very long", "users search in German"],
        ["better recall", "snappier answers", "more relevant hits"],
    ),
    "cooking": (
        [
            "sourdough starter",
            "tomato sauce",
            "cast iron pan",
            "spice rack",
            "risotto",
            "pressure cooker",
            "lentil soup",
            "pizza dough",
            "knife set",
        ],
        ["season", "simmer", "ferment", "roast", "marinate"],
        ["the kitchen is cold", "guests are vegetarian", "we run out of garlic"],
        ["tastier dinners", "less food waste", "quicker weeknight meals"],
    ),
    "gardening": (
        [
            "tomato seedlings",
            "compost heap",
            "raised bed",
            "drip irrigation",
            "apple tree",
            "herb spiral",
            "greenhouse",
            "mulch layer",
        ],
        ["prune", "water", "transplant", "fertilise", "cover"],
        ["frost is forecast", "slugs come out after rain", "the soil stays wet"],
        ["a bigger harvest", "healthier roots", "fewer weeds"],
    ),
    "travel": (
        [
            "train ticket",
            "hotel booking",
            "passport renewal",
            "packing list",
            "rental car",
            "travel insurance",
            "visa appointment",
            "itinerary",
        ],
        ["book", "cancel", "reschedule", "compare", "confirm"],
        ["the flight is delayed", "prices jump on weekends", "the museum is closed"],
        ["a calmer trip", "lower costs", "more time in the mountains"],
    ),
    "finance": (
        [
            "budget spreadsheet",
            "tax return",
            "savings account",
            "index fund",
            "invoice",
            "mortgage rate",
            "expense report",
            "pension plan",
        ],
        ["file", "reconcile", "rebalance", "pay off", "review"],
        ["interest rates rise", "the invoice is overdue", "the receipt is missing"],
        ["a bigger emergency fund", "lower fees", "less paperwork"],
    ),
    "fitness": (
        [
            "running plan",
            "knee injury",
            "stretching routine",
            "interval session",
            "swim technique",
            "rest day",
            "protein intake",
            "sleep schedule",
        ],
        ["track", "increase", "skip", "adjust", "log"],
        [
            "the knee hurts after ten kilometres",
            "it is raining all week",
            "I sleep less than six hours",
        ],
        ["a faster 10k", "fewer injuries", "more energy"],
    ),
    "machine learning": (
        [
            "training run",
            "learning rate",
            "validation split",
            "data loader",
            "checkpoint",
            "loss curve",
            "feature pipeline",
            "tokenizer",
        ],
        ["retrain", "profile", "ablate", "quantize", "fine-tune"],
        ["the loss plateaus after epoch three", "the GPU runs out of memory", "labels are noisy"],
        ["higher accuracy", "cheaper inference", "reproducible results"],
    ),
    "home repair": (
        [
            "leaking tap",
            "bathroom tiles",
            "boiler pressure",
            "window seal",
            "squeaky door",
            "roof gutter",
            "light switch",
            "fence panel",
        ],
        ["replace", "seal", "repaint", "inspect", "tighten"],
        [
            "the wind comes from the north",
            "the landlord is away",
            "the plumber cannot come until Friday",
        ],
        ["a warmer living room", "lower heating bills", "no more drips"],
    ),
    "reading": (
        [
            "history book",
            "novel",
            "reading list",
            "library card",
            "book club",
            "poetry collection",
            "biography",
            "audiobook",
        ],
        ["finish", "recommend", "annotate", "borrow", "summarise"],
        [
            "the chapters get slow in the middle",
            "the library closes early",
            "the translation is clumsy",
        ],
        ["a better discussion", "more reading time", "clearer notes"],
    ),
    "security": (
        [
            "password manager",
            "two-factor login",
            "SSH key",
            "firewall rule",
            "phishing email",
            "TLS certificate",
            "audit log",
            "backup encryption",
        ],
        ["rotate", "revoke", "renew", "harden", "report"],
        [
            "the certificate expires on Sunday",
            "an old laptop is lost",
            "a contractor still has access",
        ],
        ["fewer incidents", "a clean audit", "safer deploys"],
    ),
    "music": (
        [
            "guitar practice",
            "piano scales",
            "band rehearsal",
            "song lyrics",
            "drum pattern",
            "recording setup",
            "concert tickets",
            "chord progression",
        ],
        ["practise", "record", "arrange", "transpose", "rehearse"],
        ["the bridge section drags", "the microphone picks up noise", "the drummer is on holiday"],
        ["a tighter set", "cleaner takes", "a fuller sound"],
    ),
}
TEMPLATES = [
    "{p} said the {t} is causing trouble because {c}, so we should {v} the {t2} before {d}.",
    "Decided to {v} the {t} on {d}; {p} will check whether the {t2} still works when {c}.",
    "Note to self: {v} the {t} and ask {p} about the {t2}, since {c} it matters for {b}.",
    "Meeting with {p} on {d}: we agreed the {t} needs work and that we {v} the {t2} for {b}.",
    "Read an article on {topic}: the {t} matters more than the {t2} when {c}, which means {b}.",
    "Problem with the {t}: it breaks when {c}. Workaround from {p}: {v} the {t2} first.",
    "Idea for {topic}: {v} the {t} every {d2} so the {t2} gives us {b} without extra effort.",
    "Reminder for {d}: {v} the {t}, then compare it with the {t2} that {p} suggested.",
    "Lesson learned: if {c}, do not {v} the {t} in a hurry; {p} lost a day on the {t2} that way.",
    "Question for {p}: would it help to {v} the {t} and the {t2} together to get {b}?",
]
QUERY_TEMPLATES = [
    "what did {p} say about the {t}",
    "how to {v} the {t}",
    "{t} problems when {c}",
    "ideas for {b} in {topic}",
    "notes about the {t} and the {t2}",
    "why {v} the {t} before {d}",
    "{topic}: {t} versus {t2}",
    "plans to get {b}",
    "{p} {t} {d}",
]


def _fill(rng: random.Random, template: str, topic: str | None = None) -> str:
    topic = topic or rng.choice(list(TOPICS))
    things, verbs, conds, bens = TOPICS[topic]
    t, t2 = rng.sample(things, 2)
    return template.format(
        p=rng.choice(PEOPLE),
        t=t,
        t2=t2,
        v=rng.choice(verbs),
        c=rng.choice(conds),
        b=rng.choice(bens),
        d=rng.choice(DAYS),
        d2=rng.choice(["morning", "week", "month", "Friday"]),
        topic=topic,
    )


def _distinct(
    n: int, seed: int, make: Callable[[random.Random], str], exclude: set[str] | None = None
) -> list[str]:
    rng = random.Random(seed)
    seen = set(exclude or ())
    out: list[str] = []
    while len(out) < n:
        text = make(rng)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def make_notes(n: int, seed: int = 1, exclude: set[str] | None = None) -> list[str]:
    """n distinct notes of ~30 words: one sentence, half the time two, on one topic."""

    def make(rng: random.Random) -> str:
        a, b = rng.sample(TEMPLATES, 2)
        topic = rng.choice(list(TOPICS))
        first = _fill(rng, a, topic)
        return f"{first} {_fill(rng, b, topic)}" if rng.random() < 0.5 else first

    return _distinct(n, seed, make, exclude)


def make_queries(n: int, seed: int = 2) -> list[str]:
    """n distinct short search queries in the notes' vocabulary."""
    return _distinct(n, seed, lambda rng: _fill(rng, rng.choice(QUERY_TEMPLATES)))


def pct(samples: list[float], q: float) -> float:
    """Percentile of samples (linear interpolation)."""
    return float(np.percentile(np.asarray(samples, float), q))


@contextmanager
def timer() -> Iterator[list[float]]:
    """`with timer() as t: ...` then t[0] is the elapsed seconds."""
    box: list[float] = []
    t0 = time.perf_counter()
    try:
        yield box
    finally:
        box.append(time.perf_counter() - t0)


class Report:
    """Figures of one benchmark run: printed as a table and written as JSON."""

    def __init__(self, name: str, quick: bool) -> None:
        self.name, self.quick = name, quick
        self.rows: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.load_start = os.getloadavg()[0]

    def add(
        self, key: str, value: float, unit: str, target: str | None = None, ok: bool | None = None
    ) -> None:
        """Record one figure, with its target (e.g. '>= 0.8') and whether it is met."""
        self.rows.append(
            {
                "key": key,
                "value": round(float(value), 4),
                "unit": unit,
                "target": target,
                "ok": None if ok is None else bool(ok),
            }
        )

    def note(self, text: str) -> None:
        self.notes.append(text)

    def finish(self) -> None:
        """Print the table and write results/NAME.json."""
        width = max(len(r["key"]) for r in self.rows) if self.rows else 10
        print(f"\n{self.name}{' (--quick)' if self.quick else ''}")
        print(f"{'figure':<{width}}  {'value':>12}  {'unit':<8}  {'target':<10}  met")
        for r in self.rows:
            v = r["value"]
            shown = f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"
            met = "" if r["ok"] is None else ("yes" if r["ok"] else "NO")
            target = r["target"] or ""
            print(f"{r['key']:<{width}}  {shown:>12}  {r['unit']:<8}  {target:<10}  {met}")
        for text in self.notes:
            print(f"note: {text}")
        print(
            f"note: 1-min load average {self.load_start:.2f} at start, "
            f"{os.getloadavg()[0]:.2f} at end (2 cores; other work on the machine skews figures)"
        )
        RESULTS.mkdir(parents=True, exist_ok=True)
        payload = {
            "benchmark": self.name,
            "quick": self.quick,
            "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "machine": {
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "platform": platform.platform(),
                "loadavg_1m_start_end": [self.load_start, os.getloadavg()[0]],
            },
            "figures": {
                r["key"]: {k: r[k] for k in ("value", "unit", "target", "ok")} for r in self.rows
            },
            "notes": self.notes,
        }
        path = RESULTS / f"{self.name}.json"
        path.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {path.relative_to(REPO)}")


class TimedEmbedder:
    """Wraps an Embedder and adds up the seconds spent in its `embed` calls."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.seconds = 0.0
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - t0
            self.calls += 1


def default_embedder(store: Path | None = None) -> Any:
    """The embedder a store's keepui.toml names; with no store, the default (the real MiniLM)."""
    from keepui_engine.client.settings import load_settings
    from keepui_engine.core.config import Settings
    from keepui_engine.providers import create_embedder

    return create_embedder(load_settings(store) if store else Settings(store=Path.cwd()))
