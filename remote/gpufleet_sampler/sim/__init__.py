"""The simulator's parts: GPU models (datasheet values and physical constants) and the named
scenarios (fleets, jobs on a timeline, faults). ``backends.sim`` runs them.

Python 3.8, stdlib only.
"""
