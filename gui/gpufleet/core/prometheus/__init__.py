"""Prometheus: the app's exporter, rules export, source and receiver."""
