"""Processes on the instance: /proc reading (identity, command lines, start ticks), which
processes hold a GPU's device file and how NVML's entries map to them, command-line
redaction, and the guarded kill.

Python 3.8, stdlib only.
"""
