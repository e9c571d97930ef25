"""Linear-time guards for HTML before libxml2 sees it: attributes per tag are capped.

libxml2's HTML parser checks each new attribute against every earlier one of its tag, so one
tag with 40,000 attributes (578 KB) took 41-89 s and one of 4.6 MB ran past 300 s (issue 23).
One pass over the start tags, tokenized as HTML5 does (quotes matter only after `=`), cuts
every tag after its MAX_ATTRIBUTES-th attribute; what libxml2 then parses is linear.
"""

from __future__ import annotations

import re

MAX_ATTRIBUTES = 1000
# A start tag: its name, then names and separators (a quote not after `=` is a character of
# a name), and `=value`s, quoted or not, up to `>`. Possessive quantifiers: no backtracking,
# each character is looked at once.
_START_TAG = re.compile(r"""<[A-Za-z](?:[^>"'=]++|["']|=\s*+(?:"[^"]*+"?|'[^']*+'?|[^\s>]*+))*+""")
_TAG_NAME = re.compile(r"<[A-Za-z][^\s/>]*+")
_UNIT = re.compile(r"""(?P<name>[^\s/>=]++)|[\s/]++|=\s*+(?:"[^"]*+"?|'[^']*+'?|[^\s>]*+)""")
# A tag shorter than this cannot hold MAX_ATTRIBUTES attributes (each needs a name and a
# separator), so only longer ones are tokenized attribute by attribute.
_SHORTEST_CROWDED = 2 * MAX_ATTRIBUTES


def _cut_at(tag: str) -> int | None:
    """Where to cut a start tag so it keeps MAX_ATTRIBUTES attributes, or None if it has fewer."""
    start = _TAG_NAME.match(tag)
    names = 0
    for unit in _UNIT.finditer(tag, start.end() if start else 1):
        if unit.group("name") is not None:
            names += 1
            if names > MAX_ATTRIBUTES:
                return unit.start()
    return None


def cap_attributes(markup: str) -> tuple[str, int]:
    """The markup with every start tag cut after its MAX_ATTRIBUTES-th attribute.

    Args:
        markup: A decoded HTML page.

    Returns:
        The markup (the same object when no tag was cut) and the number of tags cut.
    """
    if max(map(len, _START_TAG.findall(markup)), default=0) < _SHORTEST_CROWDED:
        return markup, 0  # the common case: one C-speed pass, nothing long enough to check
    pieces: list[str] = []
    kept = 0
    cut = 0
    for tag in _START_TAG.finditer(markup):
        if tag.end() - tag.start() < _SHORTEST_CROWDED:
            continue
        at = _cut_at(tag.group())
        if at is None:
            continue
        pieces.append(markup[kept : tag.start() + at])
        kept = tag.end()  # the `>` (or the end of the page) follows the tag
        cut += 1
    pieces.append(markup[kept:])
    return "".join(pieces), cut
