"""Offscreen rendering: screenshots, evidence plots, simulated history."""
