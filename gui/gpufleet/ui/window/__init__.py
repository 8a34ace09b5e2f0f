"""The main window: its frame, the fleet panel, the view state, summaries."""
