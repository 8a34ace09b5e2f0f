"""The `gpufleet` command line: the GUI by default, subcommands for headless use."""
