"""Which sentences an extractive summary may quote: real sentences, no boilerplate, no repeats.

A real sentence has at least `MIN_WORDS` (6) words, ends like a sentence (". ! ? …", closing
quotes or brackets and citation marks such as "[12]" allowed after it), is mostly letters
(not a row of numbers, not a TeX formula), is not a quoted title ('"Title".', the citation
style), and matches none of the boilerplate patterns: site chrome ("Jump to navigation",
"Sign in", cookie notices), Wikipedia's tagline ("From Wikipedia, the free encyclopedia"),
pointers ("See also: ...", "Main article: ..."), dot-leader contents lines. Table rows and
infobox "Key | Value" runs never get here: the splitter drops every table row. A unit that
is a citation (it says "Retrieved 2012-05-10", "Archived from the original", a DOI or an
ISBN, or starts with a "^" back-link) gives no sentence at all. A repeated sentence (the same
words, case and spacing aside) counts once, where it first occurs.

Fallback, so a summary is made of what the text has: a text with no real sentence (a list
of short bullet fragments, a block of "Key: value" metadata, a table's labels) falls back
to its fragments that hold a letter, boilerplate and repeats still dropped, which the
summarizer joins in order with "; ".
A text with fewer real sentences than the summary length gets just those: fragments are
never used to pad real sentences.
"""

from __future__ import annotations

import re

from keepui_engine.providers.summary.text import unit_sentences, units

MIN_WORDS = 6
MIN_LETTER_SHARE = 0.6  # letters among the non-space characters
MAX_SYMBOL_SHARE = 0.04  # TeX and markup characters among all characters

_SYMBOLS = frozenset("{}\\^_=<>|")
_ENDS_LIKE_A_SENTENCE = re.compile(r"[.!?…][\"'”’)\]]*(?:\[[^\]]{1,12}\])*$")
# A title in quotes with the period outside them ('"Mozilla Manifesto".'): a citation, where
# quoted speech has its period inside ('"We did." ').
_QUOTED_TITLE = re.compile(r"^[\"“‘'][^\"“”]+[\"”’'][.,]$")
_BOILERPLATE = re.compile(
    r"""^(?:
        from\ wikipedia,\ the\ free\ encyclopedia
      | (?:jump|skip)\ to\ (?:navigation|content|main\ content|search)
      | (?:see\ also|main\ articles?|further\ information|for\ other\ uses|not\ to\ be\ confused)\b
      | this\ (?:article|section)\ (?:is\ about|needs|has\ multiple|may\ need|relies)\b
      | this\ page\ was\ last\ (?:edited|modified)
      | last\ (?:updated|modified)\b
      | (?:sign|log)\ (?:in|up|out)\b
      | (?:subscribe|share\ (?:this|on)|click\ here|read\ more|advertisement)\b
      | all\ rights\ reserved | copyright\ (?:©|\(c\)|\d{4}) | ©
      | (?:we|this\ (?:web)?site)\ uses?\ cookies
      | by\ (?:using|continuing\ to\ use)\ this\ (?:web)?site
      | table\ of\ contents\b | contents$
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_DOT_LEADER = re.compile(r"(?:\.\s?){4,}|…{2,}")
_CITATION = re.compile(
    r"^[\^↑]"  # a reference list's back-link
    r"|(?:^|[.;]\s)(?:Retrieved|Accessed)(?:\son)?\s(?:\d|[A-Z][a-z]+\s\d)"
    r"|\b[Aa]rchived from the original\b"
    r"|\b(?:doi|DOI):\s?10\.|\bISBN(?:-1[03])?:?\s?[\dX-]{9}|\barXiv:\s?\d"
)


def is_boilerplate(sentence: str) -> bool:
    """Whether a sentence is site chrome, a pointer, a tagline or a contents line."""
    return bool(_BOILERPLATE.match(sentence) or _DOT_LEADER.search(sentence))


def is_citation(unit: str) -> bool:
    """Whether a paragraph or list item is a reference-list entry, not prose."""
    return bool(_CITATION.search(unit))


def is_real_sentence(sentence: str) -> bool:
    """Whether a sentence is one a summary may quote (see the module docstring)."""
    if len(sentence.split()) < MIN_WORDS or not _ENDS_LIKE_A_SENTENCE.search(sentence):
        return False
    visible = [c for c in sentence if not c.isspace()]
    letters = sum(c.isalpha() for c in visible)
    if letters < MIN_LETTER_SHARE * len(visible):
        return False
    if sum(c in _SYMBOLS for c in sentence) > MAX_SYMBOL_SHARE * len(sentence):
        return False
    return not (_QUOTED_TITLE.match(sentence) or is_boilerplate(sentence))


def _key(sentence: str) -> str:
    return " ".join(sentence.casefold().split())


def candidates(text: str) -> tuple[list[str], bool]:
    """The sentences a summary of `text` may use, in text order, each once.

    Returns:
        The real sentences and True; or, when there are none, the fragments that are not
        boilerplate or citations, and False.
    """
    real: list[str] = []
    fragments: list[str] = []
    seen: set[str] = set()
    for unit in units(text):
        if is_citation(unit):
            continue
        for sentence in unit_sentences(unit):
            key = _key(sentence)
            if key in seen or is_boilerplate(sentence):
                continue
            seen.add(key)
            if is_real_sentence(sentence):
                real.append(sentence)
            elif any(c.isalpha() for c in sentence):  # a bare number says nothing alone
                fragments.append(sentence)
    return (real, True) if real else (fragments, False)
