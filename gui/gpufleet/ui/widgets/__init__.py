"""Reusable widgets: plots, curves, legends, fast tables, the theme."""
