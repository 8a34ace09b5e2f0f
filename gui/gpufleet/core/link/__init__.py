"""The link to one host: SSH, host keys, transports, deploying the sampler."""
