"""The wire: sampler JSON lines decoded into typed messages, and back."""
