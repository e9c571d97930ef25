"""Widgets of the workbench: each shows engine data handed to it and posts what the user chose."""
