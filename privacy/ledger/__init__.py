"""Persistence and budget files: the SQLite ledger store, its codec and TOML deployments."""
