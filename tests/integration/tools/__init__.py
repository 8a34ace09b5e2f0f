"""Integration tests of the repository's own tools (the module ceiling of `make lint`)."""
