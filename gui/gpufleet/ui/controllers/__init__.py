"""Controllers: what connects the core's output and the user's input to Qt."""
