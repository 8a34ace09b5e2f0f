"""Shipped resources (icons, default rules, desktop files, translations) as package data."""
