"""gpufleet's tests: ``tests/<area>/<stage>/`` mirrors the code (docs/architecture.md, "Tests").

A package, so that every test and helper imports as ``tests.…`` and two test modules may
share a name.
"""
