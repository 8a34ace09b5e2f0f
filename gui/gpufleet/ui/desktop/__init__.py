"""Desktop integration: tray, notifications, translations, memory trim."""
