"""The claims register, its verification and the reports it writes."""

__all__: list[str] = []
