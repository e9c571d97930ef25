"""Facet selections: tag values chosen in the facet browser, as a filter and as words."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from keepui_engine import FindResult, Hit

Selection = dict[str, list[str]]
"""KEY -> the values chosen for it: a document needs one of them for every key."""


def carries(tags: Mapping[str, object], selection: Selection) -> bool:
    """Whether tags hold, for every key of the selection, one of its values (AND across keys,
    OR within a key)."""
    for key, wanted in selection.items():
        value = tags.get(key)
        values = value if isinstance(value, list) else [value]
        if not {str(v) for v in values if v is not None} & set(wanted):
            return False
    return True


def keep_hits(result: FindResult, selection: Selection | None) -> FindResult:
    """The result with only the hits that carry the selection (all of them for None)."""
    if not selection:
        return result
    kept: list[Hit] = [h for h in result.hits if carries(h.tags, selection)]
    return result if len(kept) == len(result.hits) else replace(result, hits=kept)


def selection_text(selection: Selection) -> str:
    """`kind=bug · project=web|mobile`: one `key=values` a key, values joined by `|`."""
    return " · ".join(f"{key}={'|'.join(values)}" for key, values in selection.items())


def selection_words(selection: Selection) -> str:
    """`kind = bug and project = web or mobile`: the selection read out."""
    return " and ".join(f"{key} = {' or '.join(values)}" for key, values in selection.items())
