"""keepui: a terminal research workbench over a versioned, searchable memory store."""

__version__ = "0.1.0"
