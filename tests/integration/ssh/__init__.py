"""Integration tests against a real OpenSSH sshd on 127.0.0.1 (tests/integration/conftest.py)."""
