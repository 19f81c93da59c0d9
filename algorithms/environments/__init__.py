"""Environments: pre-drawn reward tables and contexts."""

__all__: list[str] = []
