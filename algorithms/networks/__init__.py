"""Communication graphs and message protocols shared by the papers."""

__all__: list[str] = []
