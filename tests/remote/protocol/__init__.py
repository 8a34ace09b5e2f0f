"""Tests of what the sampler says: the protocol, its schema, its docs, Python 3.8."""
