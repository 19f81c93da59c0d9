"""Wall time of ``fedpriv --help`` and ``fedpriv <command> --help`` (best of N runs).

    python benchmarks/bench_cli.py [--repeats 5]

Each command runs as a fresh process, as a user types it, so the time includes the
interpreter's start.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time

COMMANDS = (
    ["--help"],
    ["run", "--help"],
    ["experiment", "--help"],
    ["verify", "--help"],
    ["account", "--help"],
    ["audit", "--help"],
    ["run", "cdp-mab", "--help"],
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    exe = shutil.which("fedpriv") or sys.exit("fedpriv is not installed on PATH")
    for command in COMMANDS:
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            subprocess.run([exe, *command], capture_output=True, check=True)
            times.append(time.perf_counter() - started)
        print(
            f"fedpriv {' '.join(command):<24} best {min(times):.3f} s  "
            f"median {sorted(times)[len(times) // 2]:.3f} s"
        )


if __name__ == "__main__":
    main()
