"""Li & Song's private federated MAB (CDP/CE-CDP/DDP/HDP/Single-MAB)."""

__all__: list[str] = []
