"""Alerts: rules, their conditions, the engine and per-rule actions."""
