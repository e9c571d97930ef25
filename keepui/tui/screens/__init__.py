"""Screens of the workbench: main (search), document, diff, and the modal dialogs."""
