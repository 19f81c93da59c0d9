"""Li & Song: communication-efficient private federated MAB (CDP-, DDP-, HDP-MAB).

The family's one registration (:class:`fedpriv.audit.claims.registration.Family`):
its claims, views, findings and commands under the key ``li_song``.
"""

from __future__ import annotations

from fedpriv.audit.claims.registration import Command, Family, lazy

__all__ = ["FAMILY"]


FAMILY = Family(
    key="li_song",
    title="Li & Song (CDP/DDP/HDP-MAB)",
    structure_names={
        "cdp": "through a server",
        "cdp-partial": "through a server, partial participation",
        "ddp": "peer to peer",
        "hdp": "hybrid (components with sink agents)",
    },
    algorithm_names={
        "cdp-mab": "CDP-MAB",
        "ce-cdp-mab": "CE-CDP-MAB",
        "ddp-mab": "DDP-MAB",
        "hdp-mab": "HDP-MAB",
    },
    claims=lazy("fedpriv.audit.families.li_song.claims:build_claims"),
    findings=lazy("fedpriv.audit.families.li_song.findings:FINDINGS"),
    views=lazy("fedpriv.audit.families.li_song.views:VIEWS"),
    algorithms="fedpriv.algorithms.li_song",
    calibration="fedpriv.privacy.calibrations.li_song",
    setting_fields={
        "components": int,
        "delay_convention": str,
        "gap": float,
        "graph_p": float,
        "graph_seed": int,
        "participation_rate": float,
        "rewards": str,
        "rounds": int,
        "structure": str,
        "table_ii_case": int,
    },
    aliases=("lisong", "li-song"),
    order=1,
    run_commands={
        "cdp-mab": Command(
            "fedpriv.cli.li_song", "CDP-MAB, master-worker (Li & Song Alg. 1)", secure_noise=True
        ),
        "ce-cdp-mab": Command(
            "fedpriv.cli.li_song",
            "CDP-MAB with R rounds and participation p (Li & Song §IV-B)",
            secure_noise=True,
        ),
        "ddp-mab": Command(
            "fedpriv.cli.li_song",
            "DDP-MAB, decentralized with GIS (Li & Song Alg. 3)",
            secure_noise=True,
        ),
        "hdp-mab": Command(
            "fedpriv.cli.li_song",
            "HDP-MAB, hybrid with sink agents (Li & Song Alg. 5, Table II)",
            secure_noise=True,
        ),
        "single-mab": Command(
            "fedpriv.cli.li_song",
            "Single-MAB baseline: Alg. 1 per agent (Li & Song Remark 2)",
            secure_noise=True,
        ),
    },
    experiments={
        "li-song-fig4": Command("fedpriv.cli.li_song", "Li & Song Fig. 4"),
        "li-song-fig5": Command("fedpriv.cli.li_song", "Li & Song Fig. 5"),
        "li-song-fig6": Command("fedpriv.cli.li_song", "Li & Song Fig. 6"),
        "li-song-fig7": Command("fedpriv.cli.li_song", "Li & Song Fig. 7"),
        "li-song-fig8": Command("fedpriv.cli.li_song", "Li & Song Fig. 8"),
        "li-song-fig9": Command("fedpriv.cli.li_song", "Li & Song Fig. 9"),
        "li-song-fig10": Command("fedpriv.cli.li_song", "Li & Song Fig. 10"),
        "li-song-fig11": Command("fedpriv.cli.li_song", "Li & Song Fig. 11"),
        "li-song-fig12": Command("fedpriv.cli.li_song", "Li & Song Fig. 12"),
    },
)
