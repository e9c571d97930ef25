"""Search configurations ([search.configs.NAME]): parsed and checked like [search], applied by
find (explicit options still win), listed with what they change, and saved into keepui.toml
with its comments kept."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest
from support import make_fake_store

from keepui_engine import ConfigError, UsageError, open_workbench
from keepui_engine.client.settings import load_settings
from keepui_engine.core.config_values import BadNumber
from keepui_engine.core.search_configs import changes, configured, limit_of, names, save
from keepui_engine.search import fusion


def _store(tmp_path: Path, extra: str) -> Path:
    store = make_fake_store(tmp_path / "s")
    with (store / "keepui.toml").open("a") as fh:
        fh.write(extra)
    return store


def test_configurations_are_parsed_and_name_what_they_change(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        '\n[search.configs.words]\nfusion = "rrf"\nbm25_weight = 2\nmode = "hybrid"\n'
        '\n[search.configs.fresh]\nrerank = "mix"\nhalf_life_days = 7\nlimit = 5\n',
    )
    st = load_settings(store)
    assert names(st) == ["default", "words", "fresh"]
    assert st.search_configs["words"] == {"fusion": "rrf", "bm25_weight": 2.0, "mode": "hybrid"}
    assert changes(st, "words") == {"fusion": "rrf", "bm25_weight": 2.0}  # hybrid is the default
    assert changes(st, "default") == {}
    words = configured(st, "words")
    assert (words.fusion, words.fusion_weights, words.search_mode) == ("rrf", (1.0, 2.0), "hybrid")
    assert configured(st, None) is st and configured(st, "default") is st
    assert limit_of(st, "fresh") == 5 and limit_of(st, "words") == 10
    with pytest.raises(UsageError, match=r"--config 'nope'.*known: default, words, fresh"):
        configured(st, "nope")


@pytest.mark.parametrize(
    ("table", "error", "message"),
    [
        ('fusion = "mean"', ConfigError, r"\[search.configs.x\] fusion = 'mean'; choose one of"),
        ("colour = 1", ConfigError, r"\[search.configs.x\]: no setting 'colour'"),
        ("dedup = 1", ConfigError, r"\[search.configs.x\] dedup = 1; give true or false"),
        ("recency_weight = 2", BadNumber, r"\[search.configs.x\] recency_weight = 2 is out of"),
        ("score_prior = 0", BadNumber, r"score_prior = 0 is out of range; give a number above 0"),
        ("limit = 2.5", BadNumber, r"limit = 2.5; give an integer"),
        ("min_score = nan", BadNumber, r"min_score = nan is not a finite number"),
    ],
)
def test_a_bad_value_names_the_file_table_and_key(
    tmp_path: Path, table: str, error: type[Exception], message: str
) -> None:
    store = _store(tmp_path, f"\n[search.configs.x]\n{table}\n")
    with pytest.raises(error, match=message) as got:
        load_settings(store)
    assert str(store / "keepui.toml") in str(got.value)
    assert got.value.exit_code == (1 if error is BadNumber else 2)  # type: ignore[attr-defined]


def test_default_is_reserved_and_names_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="`default` is \\[search\\] itself"):
        load_settings(_store(tmp_path / "a", '\n[search.configs.default]\nfusion = "rrf"\n'))
    with pytest.raises(ConfigError, match="letters, digits"):
        load_settings(_store(tmp_path / "b", '\n[search.configs."a b"]\nfusion = "rrf"\n'))


def test_find_uses_the_configuration_and_explicit_options_win(tmp_path: Path) -> None:
    store = _store(tmp_path, '\n[search.configs.words]\nmode = "bm25"\nlimit = 1\n')
    with open_workbench(store, own=True) as wb:
        wb.put("alpha beta gamma", id="a")
        wb.put("alpha delta", id="b")
        assert wb.find("alpha").mode == "hybrid"
        got = wb.find("alpha", config="words")
        assert got.mode == "bm25" and len(got.hits) == 1  # its limit
        assert wb.find("alpha", config="words", mode="dense", limit=5).mode == "dense"
        assert len(wb.find("alpha", config="words", limit=5).hits) == 2
        with pytest.raises(UsageError, match="no such search configuration"):
            wb.find("alpha", config="other")


def test_passages_off_ranks_by_whole_texts(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "s", chunk_size=20, chunk_overlap=0, min_chunk_size=1)
    with (store / "keepui.toml").open("a") as fh:
        fh.write("\n[search.configs.whole]\npassages = false\n")
    long = " ".join(f"word{i}" for i in range(200)) + " zebra crossing " + "tail " * 50
    with open_workbench(store, own=True) as wb:
        wb.put(long, id="long")
        with_parts = wb.find("zebra crossing").hits
        whole = wb.find("zebra crossing", config="whole").hits
    assert with_parts[0].part is not None  # a passage names the hit
    assert [h.id for h in whole] == ["long"] and whole[0].part is None


def test_the_prior_changes_score_fusions_rate() -> None:
    dense = np.linspace(0.8, 0.2, 30)
    bm25 = np.linspace(12.0, 0.5, 30)
    idf = np.asarray([2.0, 3.0])
    default = fusion.bm25_rate(dense, bm25, idf)
    assert fusion.bm25_rate(dense, bm25, idf, fusion.PRIOR) == default
    assert fusion.bm25_rate(dense, bm25, idf, 30.0) != default


def test_save_adds_or_replaces_a_table_and_keeps_comments(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "s")
    path = store / "keepui.toml"
    before = path.read_text()
    save(path, "tuned", {"fusion": "rrf", "dense_weight": 0.5, "bm25_weight": 1.0}, "why: a test")
    text = path.read_text()
    assert text.startswith(before) and "# why: a test\n[search.configs.tuned]\n" in text
    save(path, "tuned", {"fusion": "score", "score_prior": 10.0})
    data = tomllib.loads(path.read_text())
    assert data["search"]["configs"]["tuned"] == {"fusion": "score", "score_prior": 10.0}
    assert path.read_text().count("[search.configs.tuned]") == 1
    assert "# Recency decay" in path.read_text()  # the seeded comments are still there
    assert load_settings(store).search_configs["tuned"]["score_prior"] == 10.0
    with pytest.raises(UsageError, match="not a configuration name"):
        save(path, "default", {"fusion": "rrf"})
    with pytest.raises(BadNumber):
        save(path, "bad", {"recency_weight": 5.0})
    assert "[search.configs.bad]" not in path.read_text()  # checked before it was written
