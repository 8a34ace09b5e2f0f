"""Rental providers' APIs (vast.ai, RunPod, Lambda): list instances, stop, resume, terminate."""
