"""Schema as data and the graph through the CLI (real subprocesses, fake embedder)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import run_cli

from keepui_engine.flows import loader
from keepui_engine.flows.diagram import node, transitions


def js(result: object) -> dict:
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]
    return json.loads(result.stdout)  # type: ignore[attr-defined]


def put(store: Path, text: str, doc: str, *tags: str) -> None:
    args = [x for t in tags for x in ("-t", t)]
    result = run_cli(store, "put", "--text", text, "-i", doc, *args)
    assert result.returncode == 0, result.stderr


@pytest.fixture
def store(backend_dir: Path) -> Path:
    """An empty fake-embedder store on each backend."""
    return backend_dir


def test_system_documents_are_hidden_unless_all(store: Path) -> None:
    put(store, "Friday releases are risky", "quote", "topic=release")
    put(store, "*.tmp\nreleases/", ".ignore")
    put(store, "_inverse: said", ".tag/speaker")
    found = js(run_cli(store, "find", "releases", "--json", "--min-score", "0"))
    assert [h["id"] for h in found["hits"]] == ["quote"]
    everything = js(run_cli(store, "find", "releases", "--all", "--json", "--min-score", "0"))
    assert ".ignore" in {h["id"] for h in everything["hits"]}
    listed = js(run_cli(store, "list", "--json"))["items"]
    assert [i["id"] for i in listed] == ["quote"]
    assert {i["id"] for i in js(run_cli(store, "list", "--all", "--json"))["items"]} == {
        "quote",
        ".ignore",
        ".tag/speaker",
    }
    assert [i["id"] for i in js(run_cli(store, "list", ".tag/", "--json"))["items"]] == [
        ".tag/speaker"
    ]
    stats = js(run_cli(store, "stats", "--json"))
    assert (stats["items"], stats["system_items"]) == (1, 2)


def test_a_broken_state_doc_is_refused_at_put_with_its_line(store: Path, tmp_path: Path) -> None:
    doc = tmp_path / "flow.yaml"
    doc.write_text(
        "match: all\nrules:\n  - {id: a, do: find}\n  - {id: b, when: 'x >', do: find}\n"
    )
    result = run_cli(store, "put", str(doc), "--id", ".state/mine", "--json")
    assert result.returncode == 1
    assert "line 4:" in result.stderr and "cannot parse the expression" in result.stderr
    assert json.loads(result.stdout)["error"]["kind"] in ("usage", "flow")
    doc.write_text("match: all\nrules: [\n")
    assert "line 3:" in run_cli(store, "put", str(doc), "--id", ".state/mine").stderr


def test_a_stored_broken_doc_warns_and_the_shipped_default_runs(
    store: Path, tmp_path: Path
) -> None:
    put(store, "Friday releases are risky", "quote")
    broken = {"id": ".state/query-resolve", "text": "match: all\nrules:\n  - {do: nosuch: x}\n"}
    dump = tmp_path / "old.jsonl"
    dump.write_text(json.dumps(broken) + "\n")  # import writes it unchecked, like an old store
    assert run_cli(store, "import", str(dump)).returncode == 0
    result = run_cli(store, "flow", "-q", "friday releases", "--json")
    assert result.returncode == 0, result.stderr
    assert "warning: .state/query-resolve is broken" in result.stderr
    assert "line 3" in result.stderr
    assert json.loads(result.stdout)["warnings"]


def test_reset_restores_shipped_docs_and_keeps_the_edits(store: Path, tmp_path: Path) -> None:
    shipped = loader.builtin_text("query-resolve")
    assert shipped is not None
    edited = "# my own comment survives\n" + shipped.replace("margin_high", "margin_low", 1)
    doc = tmp_path / "qr.yaml"
    doc.write_text(edited)
    assert run_cli(store, "put", str(doc), "--id", ".state/query-resolve").returncode == 0
    got = js(run_cli(store, "get", ".state/query-resolve", "--json"))
    assert got["text"].startswith("# my own comment survives")
    refused = run_cli(store, "config", "--reset-system-docs")  # not a terminal, no --yes
    assert refused.returncode == 1 and "--yes" in refused.stderr
    done = js(run_cli(store, "config", "--reset-system-docs", "--yes", "--json"))
    assert {"id": ".state/query-resolve", "action": "updated"} in done["reset"]
    assert js(run_cli(store, "get", ".state/query-resolve", "--json"))["text"] == shipped
    history = js(run_cli(store, "get", ".state/query-resolve", "--history", "--json"))
    assert len(history["versions"]) == 2
    older = js(run_cli(store, "get", ".state/query-resolve@V{1}", "--json"))
    assert older["text"] == edited


def test_the_state_diagram_holds_every_transition(store: Path) -> None:
    put(store, "a note", "n")
    result = run_cli(store, "config", "--state-diagram")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith("stateDiagram-v2\n")
    drawn = set(re.findall(r"^\s+(\S+) --> (\S+)", text, re.M))
    docs = [loader.builtin_doc(n) for n in loader.builtin_names()]
    expected = {(a, b) for a, b, _ in transitions([d for d in docs if d is not None])}
    assert expected and expected <= drawn
    assert ("[*]", node("query-resolve")) in drawn


def test_edges_both_ways_stubs_removal_and_backfill(store: Path) -> None:
    put(store, "Ship on Friday", "q1", "speaker=alice")  # before the link exists
    assert js(run_cli(store, "get", "q1", "--json"))["edges"] == {}
    put(store, "_inverse: said", ".tag/speaker")  # back-fills q1's edge and makes alice
    assert js(run_cli(store, "get", "q1", "--json"))["edges"] == {"speaker": ["alice"]}
    alice = js(run_cli(store, "get", "alice", "--json"))
    assert alice["edges"] == {"said": ["q1"]} and alice["text"] == ""
    assert "said: q1" in run_cli(store, "get", "alice").stdout
    put(store, "No, Monday", "q2", "speaker=alice", "speaker=bob")
    assert js(run_cli(store, "get", "alice", "--json"))["edges"] == {"said": ["q1", "q2"]}
    assert js(run_cli(store, "get", "bob", "--json"))["edges"] == {"said": ["q2"]}
    assert run_cli(store, "tag", "q2", "-r", "speaker").returncode == 0
    assert js(run_cli(store, "get", "alice", "--json"))["edges"] == {"said": ["q1"]}
    assert js(run_cli(store, "get", "q2@V{1}", "--json"))["tags"]["speaker"] == ["alice", "bob"]
    assert run_cli(store, "del", "q1", "--purge").returncode == 0
    assert js(run_cli(store, "get", "alice", "--json"))["edges"] == {}


def test_find_deep_groups_edge_and_vector_neighbours_without_repeats(store: Path) -> None:
    put(store, "_inverse: said", ".tag/speaker")
    put(store, "Friday releases are risky for the team", "q1", "speaker=alice")
    put(store, "Release schedule for Friday deploys", "sched")
    put(store, "Deploy checklist before the release", "check")
    put(store, "Alice leads the release team", "alice")
    doc = js(run_cli(store, "find", "risky", "-m", "bm25", "--deep", "--json"))
    [hit] = doc["hits"]
    assert hit["id"] == "q1"
    related = hit["related"]
    assert related[0] == {
        "id": "alice",
        "via": "edge:speaker",
        "score": related[0]["score"],
        "summary": "Alice leads the release team",
    }
    similar = [r for r in related if r["via"] == "similar"]
    assert {r["id"] for r in similar} == {"sched", "check"}  # alice came by edge already
    assert all(isinstance(r["score"], float) for r in similar)
    ids = ["q1"] + [r["id"] for r in related]
    assert len(ids) == len(set(ids)) and not any(i.startswith(".") for i in ids)
    many = js(run_cli(store, "find", "friday release", "--deep", "--json", "--min-score", "0"))
    listed = [h["id"] for h in many["hits"]] + [r["id"] for h in many["hits"] for r in h["related"]]
    assert len(listed) == len(set(listed))  # never repeats a hit or an earlier neighbour
    plain = js(run_cli(store, "find", "friday releases", "--json"))
    assert all("related" not in h for h in plain["hits"])


def test_get_context_and_meta_docs(store: Path) -> None:
    put(store, "when:\n  project: atlas\nnote: Atlas decisions need Ann's sign-off.", ".meta/atlas")
    put(store, "Atlas ships in March", "atlas-plan", "project=atlas")
    put(store, "Atlas budget approved", "atlas-budget", "project=atlas")
    put(store, "Unrelated bread note", "bread")
    got = js(run_cli(store, "get", "atlas-plan", "--context", "--json"))
    assert {"item", "similar", "edges", "parts", "versions", "meta"} <= set(got)
    assert got["meta"] == [
        {
            "id": ".meta/atlas",
            "note": "Atlas decisions need Ann's sign-off.",
            "when": {"project": "atlas"},
        }
    ]
    assert "atlas-plan" not in {s["id"] for s in got["similar"]}
    assert js(run_cli(store, "get", "bread", "--context", "--json"))["meta"] == []
    bad = run_cli(store, "put", "--text", "note: no when", "-i", ".meta/bad")
    assert bad.returncode == 1 and "when:" in bad.stderr
    flow = js(run_cli(store, "flow", "get-context", "-p", "id=atlas-plan", "--json"))
    assert flow["status"] == "done" and flow["data"]["context"]["id"] == "atlas-plan"


def test_find_resolve_prints_like_find_with_the_flow(store: Path) -> None:
    for doc, text in (("a", "OAuth2 tokens for the gateway"), ("b", "Sourdough bread")):
        put(store, text, doc)
    doc = js(run_cli(store, "find", "OAuth2 tokens gateway", "--resolve", "--json"))
    assert {"query", "hits", "mode", "flow"} <= set(doc)
    assert set(doc["flow"]) >= {"status", "reason", "ticks", "path"}
    assert doc["flow"]["path"][0] == "query-resolve" and "trace" not in doc["flow"]
    traced = js(run_cli(store, "find", "OAuth2 tokens gateway", "--resolve", "--trace", "--json"))
    assert len(traced["flow"]["trace"]) == traced["flow"]["ticks"]
    assert run_cli(store, "find", "x", "--trace").returncode == 1
    assert run_cli(store, "find", "x", "--resolve", "--since", "P1D").returncode == 1
