"""What the views show, computed without drawing: the view state a tab redraws from, the
per-host and per-GPU summaries, and the wording of alerts in the window."""
