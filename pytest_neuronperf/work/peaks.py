"""Peak compute and memory bandwidth per device kind: the roof of the roofline.

Built-in figures are vendors' published, per-device, *dense* numbers:

- Trainium2 / Trainium3: AWS's figures (../shared/NEURON.md): BF16 dense 667 / 671 TFLOPS,
  HBM 2.9 / 4.9 TB/s, per chip. The ``neuron:`` device kind counts NeuronCores but does not
  name the chip, so these apply only to kinds that do (``neuron:trn2...``); otherwise set
  the peaks in the ini file. A region running on one logical NeuronCore gets a fraction of
  the chip (Trn2: 8 physical cores, about 79 BF16 TFLOPS each), so chip peaks understate
  how close a single-core region is to its own roof.
- NVIDIA H100 / H200: NVIDIA's data-center product pages and datasheets (Technical
  Specifications). NVIDIA lists tensor-core figures "with sparsity"; dense is half. BF16
  (= FP16) dense tensor core: H100 SXM and H200 SXM 989 TFLOPS, H100 NVL and H200 NVL
  835, H100 PCIe 756. FP32 (no tensor cores, PyTorch's default for float32 matmuls since
  TF32 is off): 67 / 60 / 51 TFLOPS. HBM: H100 SXM 3.35 TB/s, NVL 3.9, PCIe 2.0; H200 4.8.
- CPU: no published figure fits a shared CI runner, so ``calibrate.py`` measures it.

Users override or add peaks with the ``neuron_profile_peaks`` ini key, one line per device
kind (a ``fnmatch`` pattern), FLOP/s then bytes/s::

    [pytest]
    neuron_profile_peaks =
        cuda:NVIDIA H200 = 989e12, 4.8e12
        neuron:* = 667e12, 2.9e12
        cpu:x86_64 = 1.2e12, 40e9
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ..errors import NeuronPerfError
from ..settings import PEAKS_INI

INI_KEY = PEAKS_INI
_EXAMPLE = "cuda:NVIDIA H200 = 989e12, 4.8e12"


class PeaksError(NeuronPerfError, ValueError):
    """A peaks setting that cannot be used; the message names it and says what to write."""


@dataclass(frozen=True)
class Peaks:
    """The roof for one device: peak FLOP/s and peak memory bytes/s."""

    flops_per_s: float
    bytes_per_s: float
    # Which precision flops_per_s is for, and where the numbers come from.
    precision: str
    source: str
    # The float32 peak where it differs (GPUs without TF32): regions whose FLOPs are
    # mostly float32 are held to it.
    fp32_flops_per_s: float | None = None

    def compute_peak(self, dtype: str) -> float:
        if dtype == "float32" and self.fp32_flops_per_s is not None:
            return self.fp32_flops_per_s
        return self.flops_per_s

    def describe(self) -> str:
        return (
            f"{self.flops_per_s / 1e12:g} TFLOP/s ({self.precision}), "
            f"{self.bytes_per_s / 1e9:g} GB/s ({self.source})"
        )


_NVIDIA = "NVIDIA data-center product page / datasheet, dense (sparsity figure halved)"
_AWS = "AWS published figures (NEURON.md)"

# (substring of the device kind, peaks); the first match wins, so variants come first.
BUILTIN: tuple[tuple[str, Peaks], ...] = (
    ("cuda:NVIDIA H100 NVL", Peaks(835e12, 3.9e12, "bf16 dense tensor core", _NVIDIA, 60e12)),
    ("cuda:NVIDIA H100 PCIe", Peaks(756e12, 2.0e12, "bf16 dense tensor core", _NVIDIA, 51e12)),
    ("cuda:NVIDIA H100", Peaks(989e12, 3.35e12, "bf16 dense tensor core", _NVIDIA, 67e12)),
    ("cuda:NVIDIA H200 NVL", Peaks(835e12, 4.8e12, "bf16 dense tensor core", _NVIDIA, 60e12)),
    ("cuda:NVIDIA H200", Peaks(989e12, 4.8e12, "bf16 dense tensor core", _NVIDIA, 67e12)),
    ("neuron:trn2", Peaks(667e12, 2.9e12, "bf16 dense, per chip", _AWS)),
    ("neuron:trainium2", Peaks(667e12, 2.9e12, "bf16 dense, per chip", _AWS)),
    ("neuron:trn3", Peaks(671e12, 4.9e12, "bf16 dense, per chip", _AWS)),
    ("neuron:trainium3", Peaks(671e12, 4.9e12, "bf16 dense, per chip", _AWS)),
)


def builtin_peaks(device_kind: str) -> Peaks | None:
    kind = device_kind.lower()
    for needle, peaks in BUILTIN:
        if kind.startswith(needle.lower()):
            return peaks
    return None


def _positive(text: str, what: str, where: str) -> float:
    try:
        value = float(text.strip().replace("_", ""))
    except ValueError:
        raise PeaksError(
            f"{where}: {what} {text.strip()!r} is not a number; write e.g. {_EXAMPLE!r}"
        ) from None
    if not math.isfinite(value) or value <= 0:
        raise PeaksError(f"{where}: {what} must be a number > 0, got {text.strip()!r}")
    return value


def parse_peaks(lines: Iterable[str], source: str = INI_KEY) -> tuple[tuple[str, Peaks], ...]:
    """``DEVICE_KIND = FLOP_PER_S, BYTES_PER_S`` lines -> (pattern, peaks), in order.

    Blank lines and ``#`` comments are skipped. Raises PeaksError naming the line."""
    out: list[tuple[str, Peaks]] = []
    for n, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{source} line {n} ({raw.strip()!r})"
        # Device kinds contain ':' and spaces but never '=': split on the last one.
        kind, eq, figures = line.rpartition("=")
        parts = figures.split(",")
        if not eq or not kind.strip() or len(parts) != 2:
            raise PeaksError(
                f"{where}: expected 'DEVICE_KIND = FLOP_PER_S, BYTES_PER_S', e.g. {_EXAMPLE!r} "
                "(the device kind as the report's device column shows it; * and ? match)"
            )
        flops = _positive(parts[0], "FLOP/s", where)
        bandwidth = _positive(parts[1], "bytes/s", where)
        out.append((kind.strip(), Peaks(flops, bandwidth, "as configured", source)))
    return tuple(out)


class PeakTable:
    """Peaks for any device kind: ini overrides first, then built-in figures, then (CPU) a
    calibration measured once and kept for the session."""

    def __init__(
        self,
        overrides: Iterable[tuple[str, Peaks]] = (),
        calibrate: Callable[[], Peaks] | None = None,
    ) -> None:
        self.overrides = tuple(overrides)
        self._calibrate = calibrate
        self._calibrated: Peaks | None = None

    def for_kind(self, device_kind: str) -> Peaks | None:
        for pattern, peaks in self.overrides:
            if fnmatchcase(device_kind, pattern):
                return peaks
        known = builtin_peaks(device_kind)
        if known is not None:
            return known
        if device_kind.startswith("cpu:") and self._calibrate is not None:
            if self._calibrated is None:
                self._calibrated = self._calibrate()
            return self._calibrated
        return None

    @staticmethod
    def missing_note(device_kind: str) -> str:
        return (
            f"no peaks known for {device_kind}: add a line '{device_kind} = FLOP_PER_S, "
            f"BYTES_PER_S' to {INI_KEY} in the ini file to get its roofline"
        )
