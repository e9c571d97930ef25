"""Document ingestion: pure extractors that turn file bytes into text, tags and structure."""
