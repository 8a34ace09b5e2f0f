"""Dialogs: hosts, kill confirmation, settings, host-key prompt."""
