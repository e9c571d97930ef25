"""Test collections for ranking, built from what is on this machine (no downloads), in BEIR form.

Not a benchmark itself: `bench_collections.py` imports it as `collections_build`. Every
collection is written once under ~/.cache/keepui/collections/NAME/ (corpus.jsonl,
queries.jsonl, qrels/test.tsv) and read from there; nothing is written into the repository,
and SciFact is read in place.

* `sci-halves`: every SciFact abstract with at least 6 sentences becomes two documents, its
  first half (`ID-a`) and its second half less the last sentence (`ID-b`); titles and last
  sentences are held out. Three query sets share that corpus:
  - `continuation` (ArguAna-like: a long paragraph in, the passage that answers it out): the
    query is `ID-a` itself, a paragraph of ~100-200 words, and the relevant document is
    `ID-b`. The query is in the corpus under its own id, as ArguAna's are, and eval drops it.
  - `title`: the title (a short noun phrase) finds both halves.
  - `conclusion`: the held-out last sentence (the finding, usually reworded from the body)
    finds both halves; neither contains it.
* `docs-passages`: the parts of the long documents in ../shared/data/docs (two Wikipedia pages
  and a 15-page Federal Register notice) are the documents; the query is a sentence held out
  of one part, the relevant document that part. Its distractors are the same document's other
  sections, so words shared with the page do not decide it.
* `py-reference`: not SciFact, and long. Python's own reference documentation as the
  interpreter ships it (`pydoc_data.topics`: 79 topics of the language reference, 20 to
  8,600 words, median ~240) and the longer module docstrings of the standard library (150
  words or more) are the documents; the query is a prose sentence held out of one of them
  (8 to 50 words; one a document and one more per ~25 sentences, at most 12), the relevant
  document the one it came from. Most held-out sentences sit past the first ~180 words one
  MiniLM vector sees; `places.json` records each query's word offset in its document.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
SCIFACT = SHARED / "beir" / "scifact"
CACHE = Path.home() / ".cache" / "keepui" / "collections"
SAMPLE = 500
SEED = 15

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


def sentences(text: str) -> list[str]:
    """The sentences of a text (a plain punctuation rule: enough for abstracts)."""
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def _write(
    folder: Path,
    corpus: list[dict[str, str]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
) -> None:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in corpus), encoding="utf-8"
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()),
        encoding="utf-8",
    )
    lines = ["query-id\tcorpus-id\tscore"]
    lines += [f"{q}\t{d}\t{g}" for q, rel in qrels.items() for d, g in rel.items()]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _scifact() -> Iterator[dict[str, str]]:
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def sci_halves() -> dict[str, Path]:
    """Build (once) the halves corpus and its three query sets; return set name -> folder.

    The three folders hold the same corpus.jsonl (so `keepui eval` reuses one store for
    them: the scratch store is keyed by the corpus file's content).
    """
    names = ("continuation", "title", "conclusion")
    out = {n: CACHE / f"sci-{n}" for n in names}
    if all((p / "qrels" / "test.tsv").exists() for p in out.values()):
        return out
    corpus: list[dict[str, str]] = []
    usable = []
    for row in _scifact():
        sents = sentences(row.get("text", ""))
        last = sents[-1] if sents else ""
        if len(sents) < 6 or len(last.split()) < 8 or not row.get("title"):
            continue
        body = sents[:-1]
        cut = (len(body) + 1) // 2
        doc = str(row["_id"])
        corpus.append({"_id": f"{doc}-a", "title": "", "text": " ".join(body[:cut])})
        corpus.append({"_id": f"{doc}-b", "title": "", "text": " ".join(body[cut:])})
        usable.append((doc, str(row["title"]), last))
    picked = random.Random(SEED).sample(usable, min(SAMPLE, len(usable)))
    text_of = {r["_id"]: r["text"] for r in corpus}
    sets: dict[str, tuple[dict[str, str], dict[str, dict[str, int]]]] = {
        "continuation": (
            {f"{d}-a": text_of[f"{d}-a"] for d, _, _ in picked},
            {f"{d}-a": {f"{d}-b": 1} for d, _, _ in picked},
        ),
        "title": (
            {f"t{d}": title for d, title, _ in picked},
            {f"t{d}": {f"{d}-a": 1, f"{d}-b": 1} for d, _, _ in picked},
        ),
        "conclusion": (
            {f"c{d}": last for d, _, last in picked},
            {f"c{d}": {f"{d}-a": 1, f"{d}-b": 1} for d, _, _ in picked},
        ),
    }
    for name, (queries, qrels) in sets.items():
        _write(out[name], corpus, queries, qrels)
    return out


def docs_passages(store: Path) -> Path:
    """Build (once) the held-out-sentence collection from the parts of ../shared/data/docs.

    Args:
        store: A scratch store to extract the documents with (keepui's own put DIR).
    """
    folder = CACHE / "docs-passages"
    if (folder / "qrels" / "test.tsv").exists():
        return folder
    from keepui_engine import open_workbench

    with open_workbench(store, own=True) as wb:
        wb.ingest([str(SHARED / "docs")])
        ids = [item.id for item in wb.list_items(limit=1000)]
        parts = [p for doc in ids for p in wb.parts(doc)]
    rng = random.Random(SEED)
    corpus, queries, qrels = [], {}, {}
    for p in parts:
        pid = f"{p.id.rsplit('/', 1)[-1]}#{p.part}"
        sents = sentences(p.text)
        good = [i for i, s in enumerate(sents) if 8 <= len(s.split()) <= 60]
        if len(sents) >= 4 and good:
            i = rng.choice(good)
            queries[f"q{pid}"] = sents[i]
            qrels[f"q{pid}"] = {pid: 1}
            sents = sents[:i] + sents[i + 1 :]
        corpus.append({"_id": pid, "title": p.title or "", "text": " ".join(sents)})
    _write(folder, corpus, queries, qrels)
    return folder


def sci_bundles() -> dict[str, Path]:
    """Build (once) the long-document corpus and its two query sets; return name -> folder.

    Every SciFact abstract with a title and at least 4 sentences, less its last sentence, goes
    into a bundle of 1, 2 or 3 abstracts (chosen at random, shuffled order) joined as one
    plain paragraph: documents of ~180 to ~550 words with no structure to split on, one topic
    after another, as in a long note or a page. Two query sets share that corpus:
      - `bundle-conclusion`: an abstract's held-out last sentence finds its bundle;
      - `bundle-title`: an abstract's (held-out) title finds its bundle.
    Whatever an abstract's place in its bundle, the relevant text is somewhere in the
    document; only the first ~180 words fit in one MiniLM vector (256 word pieces).
    """
    names = ("conclusion", "title")
    out = {n: CACHE / f"bundle-{n}" for n in names}
    if all((p / "qrels" / "test.tsv").exists() for p in out.values()):
        return out
    usable = []
    for row in _scifact():
        sents = sentences(row.get("text", ""))
        if len(sents) < 4 or len(sents[-1].split()) < 8 or not row.get("title"):
            continue
        usable.append((str(row["_id"]), " ".join(sents[:-1]), str(row["title"]), sents[-1]))
    rng = random.Random(SEED)
    rng.shuffle(usable)
    corpus: list[dict[str, str]] = []
    home: dict[str, tuple[str, int]] = {}
    at = 0
    while at < len(usable):
        size = rng.choice((1, 2, 3))
        group = usable[at : at + size]
        bundle = f"b{len(corpus) + 1}"
        corpus.append({"_id": bundle, "title": "", "text": " ".join(g[1] for g in group)})
        for place, g in enumerate(group, 1):
            home[g[0]] = (bundle, place)
        at += size
    picked = rng.sample(usable, min(SAMPLE, len(usable)))
    sets = {
        "conclusion": (
            {f"c{d}": last for d, _, _, last in picked},
            {f"c{d}": {home[d][0]: 1} for d, _, _, _ in picked},
        ),
        "title": (
            {f"t{d}": title for d, _, title, _ in picked},
            {f"t{d}": {home[d][0]: 1} for d, _, _, _ in picked},
        ),
    }
    for name, (queries, qrels) in sets.items():
        _write(out[name], corpus, queries, qrels)
    places = {f"{k}{d}": home[d][1] for d, *_ in picked for k in ("c", "t")}
    for folder in out.values():
        (folder / "places.json").write_text(json.dumps(places))
    return out


def sci_claims() -> Path:
    """Build (once) `sci-claims`: SciFact turned round, a whole abstract in, its claims out.

    The documents are SciFact's 1,109 claims (one sentence each; only the 300 test claims have
    judgements, the others are distractors); each query is the title and abstract of a
    document some test claim is judged against (a paragraph of ~200-300 words, longer than
    MiniLM's 256 word pieces), and its relevant documents are the claims judged against it.
    Long paragraph queries over short documents: BM25 sums over many query words.
    """
    folder = CACHE / "sci-claims"
    if (folder / "qrels" / "test.tsv").exists():
        return folder
    claims = [
        json.loads(line)
        for line in (SCIFACT / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    corpus = [{"_id": f"claim{c['_id']}", "title": "", "text": c["text"]} for c in claims]
    qrels: dict[str, dict[str, int]] = {}
    for line in (SCIFACT / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc, grade = line.split("\t")
        if int(grade) > 0:
            qrels.setdefault(f"doc{doc}", {})[f"claim{qid}"] = 1
    queries = {
        f"doc{row['_id']}": f"{row.get('title', '')}\n{row.get('text', '')}".strip()
        for row in _scifact()
        if f"doc{row['_id']}" in qrels
    }
    _write(folder, corpus, queries, {q: r for q, r in qrels.items() if q in queries})
    return folder


_CODE = re.compile(r"::=|>>>|\.\.\.\s|[{}\[\]=]{2}|^\s*[-*]", re.MULTILINE)


def _python_texts() -> dict[str, str]:
    """Reference topics and long stdlib module docstrings of the running Python, by id."""
    import importlib
    import inspect
    import sys
    import warnings
    from pydoc_data.topics import topics

    texts = {f"topic-{name}": text for name, text in sorted(topics.items())}
    skip = {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "ensurepip"}
    for name in sorted(sys.stdlib_module_names):
        if name.startswith("_") or name in skip:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = importlib.import_module(name)
        except Exception:  # noqa: BLE001 - platform modules that do not import here
            continue
        doc = inspect.getdoc(module) or ""
        if len(doc.split()) >= 150:
            texts[f"module-{name}"] = doc
    return texts


def py_reference() -> Path:
    """Build (once) `py-reference`: held-out sentences of Python's own documentation."""
    folder = CACHE / "py-reference"
    if (folder / "qrels" / "test.tsv").exists():
        return folder
    rng = random.Random(SEED)
    corpus, candidates = [], []
    paragraphs: dict[str, list[list[str]]] = {}
    for doc, text in _python_texts().items():
        paras = [sentences(p) for p in re.split(r"\n\s*\n", text) if p.strip()]
        paragraphs[doc] = paras
        offset = 0
        for pi, sents in enumerate(paras):
            for si, sent in enumerate(sents):
                if 8 <= len(sent.split()) <= 50 and not _CODE.search(sent) and sent[0].isupper():
                    candidates.append((doc, pi, si, offset))
                offset += len(sent.split())
    rng.shuffle(candidates)
    share = {d: min(1 + sum(len(s) for s in p) // 25, 12) for d, p in paragraphs.items()}
    taken: dict[str, list[tuple[int, int]]] = {}
    queries, qrels, places = {}, {}, {}
    for doc, pi, si, offset in candidates:
        if len(queries) >= SAMPLE or len(taken.get(doc, [])) >= share[doc]:
            continue
        qid = f"q{len(queries) + 1}"
        queries[qid] = paragraphs[doc][pi][si]
        qrels[qid] = {doc: 1}
        places[qid] = offset
        taken.setdefault(doc, []).append((pi, si))
    for doc, paras in paragraphs.items():
        held = set(taken.get(doc, []))
        kept = [
            " ".join(s for si, s in enumerate(sents) if (pi, si) not in held)
            for pi, sents in enumerate(paras)
        ]
        corpus.append({"_id": doc, "title": "", "text": "\n\n".join(k for k in kept if k)})
    _write(folder, corpus, queries, qrels)
    (folder / "places.json").write_text(json.dumps(places))
    return folder
