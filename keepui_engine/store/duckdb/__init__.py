"""The DuckDB backend: one DuckDB file, a bm25s base index with an exactly scored tail,
usearch/numpy vector files."""
