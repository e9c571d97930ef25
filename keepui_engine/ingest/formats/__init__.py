"""One extractor module per format; each exposes `extract_*(data, name, limits) -> Extracted`."""
