"""Integration tests against a real Prometheus."""
