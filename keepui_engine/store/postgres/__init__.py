"""The PostgreSQL backend: pgvector for the dense channel, BM25 in SQL over postings,
LISTEN/NOTIFY change feeds."""
