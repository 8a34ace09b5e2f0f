"""Configuration: the TOML file, hosts, settings, paths and keyring secrets."""
