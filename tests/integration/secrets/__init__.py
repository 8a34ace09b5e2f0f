"""Integration tests end to end: no secret of a command line reaches a file or an output."""
