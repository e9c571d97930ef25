"""`keepui eval` end to end on a 100-document slice of BEIR SciFact with the real model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from keepui_engine.search.evaluation import ndcg_at

SCIFACT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "beir" / "scifact"
pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def slice_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not SCIFACT.exists():
        pytest.skip(f"SciFact is not at {SCIFACT} (../shared/data/beir/scifact)")
    out = tmp_path_factory.mktemp("scifact100")
    lines = (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]
    qrels = [line.split("\t") for line in lines]
    keep_docs: set[str] = set()
    keep_q: list[str] = []
    for qid, did, _ in qrels:
        if len(keep_docs) >= 60 and did not in keep_docs:
            continue
        keep_docs.add(did)
        keep_q.append(qid)
    corpus = [json.loads(x) for x in (SCIFACT / "corpus.jsonl").read_text().splitlines()]
    chosen = [r for r in corpus if r["_id"] in keep_docs]
    chosen += [r for r in corpus if r["_id"] not in keep_docs][: 100 - len(chosen)]
    (out / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in chosen) + "\n")
    queries = [json.loads(x) for x in (SCIFACT / "queries.jsonl").read_text().splitlines()]
    (out / "queries.jsonl").write_text(
        "\n".join(json.dumps(q) for q in queries if q["_id"] in set(keep_q)) + "\n"
    )
    (out / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n"
        + "\n".join("\t".join(r) for r in qrels if r[0] in set(keep_q) and r[1] in keep_docs)
        + "\n"
    )
    return {
        "corpus": out / "corpus.jsonl",
        "queries": out / "queries.jsonl",
        "qrels": out / "qrels.tsv",
        "dir": out,
    }


def keepui_eval(files: dict[str, Path], *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "keepui",
            "eval",
            "--corpus",
            str(files["corpus"]),
            "--queries",
            str(files["queries"]),
            "--qrels",
            str(files["qrels"]),
            "--store",
            str(files["dir"] / "store"),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_eval_scores_every_mode_and_writes_trec_runs(slice_files: dict[str, Path]) -> None:
    run = slice_files["dir"] / "run.trec"
    result = keepui_eval(slice_files, "--json", "--run", str(run))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema"] == 1 and doc["docs"] == 100 and doc["queries"] > 25
    assert set(doc["modes"]) == {"dense", "bm25", "hybrid"}
    for name, m in doc["modes"].items():
        assert 0.4 < m["ndcg@10"] <= 1.0 and 0 < m["recall@100"] <= 1.0, (name, m)
        assert len(doc["per_query"][name]) == doc["queries"]
    qrels: dict[str, dict[str, int]] = {}
    for line in slice_files["qrels"].read_text().splitlines()[1:]:
        q, d, s = line.split("\t")
        qrels.setdefault(q, {})[d] = int(s)
    lines = (slice_files["dir"] / "run.hybrid.trec").read_text().splitlines()
    ranked: dict[str, list[str]] = {}
    for line in lines:
        qid, q0, docid, rank, score, tag = line.split()
        assert q0 == "Q0" and tag == "keepui-hybrid" and float(score) >= 0
        ranked.setdefault(qid, []).append(docid)
    own = sum(ndcg_at(ranked.get(q, []), qrels[q]) for q in qrels) / len(qrels)
    assert own == pytest.approx(doc["modes"]["hybrid"]["ndcg@10"], abs=1e-4)
    again = keepui_eval(slice_files, "--mode", "bm25", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["ingest_s"] == 0
    human = keepui_eval(slice_files, "--mode", "dense")
    assert human.returncode == 0 and "nDCG@10" in human.stdout and "dense" in human.stdout


def test_eval_bad_input_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    files = {"corpus": missing, "queries": missing, "qrels": tmp_path / "q.tsv", "dir": tmp_path}
    result = keepui_eval(files)
    assert result.returncode == 1 and "nope.jsonl" in result.stderr


def test_eval_takes_a_beir_folder_and_compares_modes(slice_files: dict[str, Path]) -> None:
    folder = slice_files["dir"]
    args = ["eval", "--beir", str(folder), "--qrels", str(slice_files["qrels"])]
    args += ["--store", str(folder / "store"), "-m", "dense", "-m", "hybrid:share"]
    human = subprocess.run(
        [sys.executable, "-m", "keepui", *args, "--compare", "dense"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert human.returncode == 0, human.stderr
    lines = human.stdout.splitlines()
    assert "95% CI" in lines[0] and "vs dense" in lines[0]
    share = next(line for line in lines if line.startswith("hybrid:share"))
    assert "p=" in share or "p<" in share
    assert any("reference" in line for line in lines if line.startswith("dense"))
    assert "own id is dropped" in human.stdout
    kept = subprocess.run(
        [sys.executable, "-m", "keepui", *args, "--keep-identical-ids", "--json"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert kept.returncode == 0, kept.stderr
    doc = json.loads(kept.stdout)
    assert doc["identical_ids"] == "kept" and doc["reference"] == "dense"  # hybrid not asked
    assert set(doc["modes"]) == {"dense", "hybrid:share"}
    for mode, (low, high) in ((m, doc["intervals"][m]["ndcg@10"]) for m in doc["modes"]):
        assert low <= doc["modes"][mode]["ndcg@10"] <= high
    assert set(doc["compared"]) == {"hybrid:share"}
