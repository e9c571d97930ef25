"""Flows: state docs (YAML rules) and the storage-free runtime that steps through them."""
