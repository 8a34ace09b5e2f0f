"""Notifications leaving the app: webhooks with retries."""
