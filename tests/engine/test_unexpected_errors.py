"""What leaves the facade when a library fails: a damaged database is named as such, with
what to do; anything else is an unexpected error to report."""

from __future__ import annotations

from keepui_engine.client.session import _unexpected


def test_a_corrupt_block_is_a_damaged_database_not_a_bug_report() -> None:
    exc = RuntimeError("Corrupt database file: computed checksum 1 does not match stored 2")
    err = _unexpected("find", exc)
    assert err.title == "Database damaged" and "backup" in str(err)
    assert "please report" not in str(err)


def test_anything_else_asks_for_a_report() -> None:
    err = _unexpected("find", ValueError("boom"))
    assert err.title == "Unexpected error" and "please report" in str(err)
