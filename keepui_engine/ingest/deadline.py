"""The time limit on one file's extraction, checked between steps (`[ingest] extract_timeout_s`).

Extractors call `check()` between pages, slides, paragraphs and every thousand HTML elements.
A single native call (one libxml2 parse, one page of mupdf) is not cut short: the caps on
file size, pixels, pages and attributes per tag keep each of those linear in the input.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class _Deadline:
    name: str
    seconds: float
    ends: float


_CURRENT: ContextVar[_Deadline | None] = ContextVar("keepui_extract_deadline", default=None)


@contextmanager
def limit(name: str, seconds: float) -> Iterator[None]:
    """Give the extraction of `name` at most `seconds` (0 or less: no limit) in this context."""
    if seconds <= 0:
        yield
        return
    token = _CURRENT.set(_Deadline(name, seconds, time.monotonic() + seconds))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def check() -> None:
    """Raise ExtractError when the current extraction has used up its time.

    Raises:
        ExtractError: Past the deadline; the message names the file and the setting.
    """
    current = _CURRENT.get()
    if current is None or time.monotonic() < current.ends:
        return
    from keepui_engine.ingest.extracted import ExtractError

    raise ExtractError(
        f"{current.name}: reading it took longer than {current.seconds:g} s and was stopped; "
        "raise `[ingest] extract_timeout_s` in keepui.toml to give it more time (or split the "
        "file)."
    )
