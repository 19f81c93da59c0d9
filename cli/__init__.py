"""The ``fedpriv`` command line."""

__all__: list[str] = []
