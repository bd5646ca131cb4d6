"""A pytest session launched by torchrun: which rank this process is, and the role of
every rank but 0. Every rank measures (in lockstep, each region's figures gathered through
the process group, fixture.py); rank 0 alone writes baselines and reports and prints the
neuronperf section, so a rank that holds the same figures never writes the same file."""

from __future__ import annotations

import os
from typing import Any

import pytest

from .controller import Controller


def torchrun_rank() -> tuple[int, int] | None:
    """(rank, world size) as torchrun sets them for each process; None outside it."""
    if "LOCAL_RANK" not in os.environ:
        return None
    try:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    except (KeyError, ValueError):
        return None
    return (rank, world) if world > 1 else None


class Follower(Controller):
    """A rank other than 0: judges its tests as rank 0 does, writes and prints nothing."""

    name = "follower"

    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        return

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        where = torchrun_rank()
        if not self.records or where is None:
            return
        terminalreporter.write_line(
            f"neuronperf: rank {where[0]} of {where[1]}: every rank's figures went to rank 0, "
            "which prints the report and writes the files"
        )
