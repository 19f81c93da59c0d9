"""The papers' figure experiments, at documented smaller settings."""

__all__: list[str] = []
