"""The workbench: the Textual app, its screens, widgets, messages and themes."""
