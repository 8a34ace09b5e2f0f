"""Tests against real outside programs: OpenSSH sshd, Prometheus, the packaged bundle, the
repository's own tools."""
