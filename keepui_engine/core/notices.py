"""What the engine is busy with, for a front end to show while it waits: loading the embedding
model, starting the store's server. The CLI shows a line on stderr (a spinner on a terminal);
front ends that set no reporter (the workbench, tests) show nothing. Light to import."""

from __future__ import annotations

import contextlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Protocol

    class Reporter(Protocol):
        """Shows one slow step: `begin` as it starts, `end` when it is over."""

        def begin(self, line: str) -> None: ...

        def end(self) -> None: ...


reporter: Reporter | None = None


@contextlib.contextmanager
def busy(line: str) -> Iterator[None]:
    """Tell the front end about a slow step for as long as the block runs."""
    shown = reporter
    if shown is None:
        yield
        return
    shown.begin(line)
    try:
        yield
    finally:
        shown.end()
