"""The regression-test API: audit a mechanism against a claim in one call."""

__all__: list[str] = []
