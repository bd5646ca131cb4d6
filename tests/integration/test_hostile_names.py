"""Names from a test, a trace or a device reach a terminal, a JUnit XML file and the CLI's
output as text (issue 24 items 10, 11): no control sequence, always well-formed XML."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

EVIL = "r\x1b]0;pwned\x07\x1b[2J\x1b[31m\x01\r\x9b"
MODULE = f"""
import pytest
import torch

@pytest.mark.neuron_budget(max_ops=1)
def test_t(neuron_profile):
    neuron_profile(lambda x: torch.relu(x) + x, torch.ones(64), name={EVIL!r})
"""
DATA = Path(__file__).parent.parent / "data"


def controls(text: str) -> list[str]:
    return sorted({c for c in text if (ord(c) < 32 and c not in "\t\n") or 0x7F <= ord(c) < 0xA0})


def test_a_region_named_with_escape_sequences_reaches_the_terminal_as_text(
    pytester: pytest.Pytester,
) -> None:
    """Item 10: the region name went raw to the table, the failure and its section."""
    pytester.makepyfile(test_it=MODULE)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--neuron-profile", "--neuron-profile-rounds=2", "-v", "-rA"
    )
    result.assert_outcomes(failed=1)
    out = result.stdout.str() + result.stderr.str()
    assert controls(out) == []
    assert "r\\x1b]0;pwned\\x07" in out


def test_a_region_with_control_characters_keeps_the_junit_xml_well_formed(
    pytester: pytest.Pytester,
) -> None:
    """Item 11: a control character in a property name made the file unparseable."""
    pytester.makepyfile(test_it=MODULE)
    pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--neuron-profile-rounds=2", "--junitxml=out.xml"
    ).assert_outcomes(failed=1)
    root = ET.parse(pytester.path / "out.xml").getroot()
    names = [p.get("name", "") for p in root.iter("property")]
    assert any(n.startswith("neuronperf.r]0;pwned") and n.endswith(".ops") for n in names)


def test_report_prints_a_hostile_trace_as_text(tmp_path: Path) -> None:
    """Item 10: op names and deviceProperties.name of a trace went raw to stdout."""
    doc = json.loads(gzip.decompress((DATA / "cpu_rmsnorm_naive.json.gz").read_bytes()))
    for e in doc["traceEvents"]:
        if e.get("cat") == "cpu_op":
            e["name"] = EVIL + e["name"]
    doc["deviceProperties"] = [{"name": EVIL}]
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(doc))
    done = subprocess.run(
        [sys.executable, "-m", "pytest_neuronperf", "report", str(trace)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert controls(done.stdout + done.stderr) == []
    assert "\\x1b]0;pwned" in done.stdout
