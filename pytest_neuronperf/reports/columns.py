"""The session table's column names, written once for every table that shows them."""

from __future__ import annotations

from enum import StrEnum


class Column(StrEnum):
    TEST = "test"
    REGION = "region"
    DEVICE = "device"
    OPS = "ops"
    KERNELS = "kernels"
    DEVICE_US = "device µs"
    HOST_US = "host µs"
    ROUNDS = "rounds"
    BUDGET = "budget"
    STATUS = "status"
    BASELINE = "baseline"
    LAUNCH_GAP_US = "launch gap µs"
    FLOP_PER_B = "FLOP/B"
    ROOF = "roof %"
    PEAK_MEMORY = "peak memory"


# What every session table starts with: the measurement and its figures.
_MEASURED = (
    Column.TEST,
    Column.REGION,
    Column.DEVICE,
    Column.OPS,
    Column.KERNELS,
    Column.DEVICE_US,
    Column.HOST_US,
)
# The terminal table; launch gap, work and baseline columns follow when any row has them.
TERMINAL_COLUMNS = (*_MEASURED, Column.ROUNDS, Column.BUDGET, Column.STATUS)
