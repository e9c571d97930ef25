"""Operations: every one declared once (registry.py), each run on an open store."""
