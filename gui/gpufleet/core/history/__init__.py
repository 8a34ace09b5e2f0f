"""History: the SQLite store, its encodings, exports and the audit log."""
