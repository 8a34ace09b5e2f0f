"""The live window: fixed-size ring buffers of every host's recent values."""
