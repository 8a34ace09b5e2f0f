"""The host tabs: one module per tab, their common frame and sentences."""
