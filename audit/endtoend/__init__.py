"""End-to-end audits of whole algorithms, and each paper's recipes."""

__all__: list[str] = []
