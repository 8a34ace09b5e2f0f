"""Verdicts: the health check, diagnoses, findings and evidence bundles."""
