"""The plugin end to end through pytester, on the real CPU profiler."""

from __future__ import annotations

import pytest
import xdist  # noqa: F401  (the dev extra's: a broken install fails, never skips)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MODELS = """
import pytest, torch

H = 64

def naive(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

def fused(x, w):
    return torch.rms_norm(x, (H,), w, 1e-6)

@pytest.fixture
def xw():
    return torch.randn(4, H), torch.ones(H)
"""


def write(pytester: pytest.Pytester, body: str) -> None:
    pytester.makepyfile(test_it=MODELS + body)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--neuron-profile-rounds=3", "--neuron-profile-warmup=1", *args
    )


def test_budget_that_must_fail_fails_with_the_sentence_and_per_op_table(
    pytester: pytest.Pytester,
) -> None:
    write(
        pytester,
        """
@pytest.mark.neuron_budget(max_ops=1)
def test_naive(neuron_profile, xw):
    out = neuron_profile(naive, *xw, name="rmsnorm")
    assert out.shape == (4, H)
""",
    )
    result = run(pytester, "--neuron-profile")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*neuron_budget: region 'rmsnorm' dispatched 6 ops, budget max_ops=1*",
            "*op*calls*kernels*device µs*share*",
            "*aten::mul*3*",
            "*PERF test_it.py::test_naive - neuron_budget: region *",
        ]
    )


def test_budget_that_must_pass_passes_and_the_report_lists_it(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        """
@pytest.mark.neuron_budget(max_ops=1, max_kernels=50, max_device_us=1e9, max_host_us=1e9)
def test_fused(neuron_profile, xw):
    neuron_profile(fused, *xw)

def test_unmarked(neuron_profile, xw):
    neuron_profile(naive, *xw)
    assert neuron_profile.last.ops == 6
""",
    )
    result = run(pytester, "--neuron-profile", "--strict-markers")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*neuronperf: backend cpu, device cpu:*, torch 2.*",
            "*test*region*device*ops*kernels*device µs*host µs*rounds*budget*status*",
            "*test_it.py::test_fused*fused*1*max_ops=1*ok*",
            "*test_it.py::test_unmarked*naive*6*measured*",
        ]
    )
    assert "Unknown pytest.mark" not in result.stdout.str()


def test_without_the_flag_unmarked_uses_only_run_and_budgets_still_hold(
    pytester: pytest.Pytester,
) -> None:
    write(
        pytester,
        """
from pytest_neuronperf.measure.errors import MeasureError

def test_unmarked_is_not_profiled(neuron_profile, xw):
    assert not neuron_profile.enabled
    out = neuron_profile(naive, *xw)                  # runs once, returns the result
    assert out.shape == (4, H)
    with neuron_profile.region("block"):
        fused(*xw)
    assert neuron_profile.measurements == []
    with pytest.raises(MeasureError, match="--neuron-profile"):
        neuron_profile.last

@pytest.mark.neuron_budget(max_ops=1)
def test_marked_is_enforced(neuron_profile, xw):
    assert neuron_profile.enabled
    neuron_profile(naive, *xw)
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*neuron_budget: region 'naive' dispatched 6 ops, budget max_ops=1*",
            "*neuronperf: 1 budgeted measurement, 1 over budget*",
        ]
    )
    assert "test region" not in result.stdout.str()


@pytest.mark.parametrize(
    ("marker", "sentence"),
    [
        ("max_kernels=1", "*region 'naive' ran 7 kernels, budget max_kernels=1*"),
        (
            "max_device_us=0.001",
            "*region 'naive' took * µs of device time (median of 5 rounds, 95% CI *..* µs), "
            "over budget max_device_us=0.001 with 95% confidence*",
        ),
        (
            "max_host_us=0.001",
            "*region 'naive' took * µs of host time (median of 5 rounds, 95% CI *..* µs), "
            "over budget max_host_us=0.001 with 95% confidence*",
        ),
    ],
)
def test_each_limit_can_fail(pytester: pytest.Pytester, marker: str, sentence: str) -> None:
    write(
        pytester,
        f"""
@pytest.mark.neuron_budget({marker})
def test_it(neuron_profile, xw):
    neuron_profile(naive, *xw)
""",
    )
    # Five rounds: the fewest a time budget's interval is judged on.
    result = run(pytester, "--neuron-profile-rounds=5")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([sentence])


def test_a_time_budget_on_too_few_rounds_is_not_judged_unless_strict(
    pytester: pytest.Pytester,
) -> None:
    write(
        pytester,
        """
@pytest.mark.neuron_budget(max_host_us=0.001)
def test_it(neuron_profile, xw):
    neuron_profile(naive, *xw)
""",
    )
    result = run(pytester, "--neuron-profile")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*max_host_us not judged: 3 rounds, at least 5 needed*"])
    result = run(pytester, "--neuron-profile-budget-strict")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*took * µs of host time (median of 3 rounds), budget max_host_us=0.001 (strict: *"]
    )


def test_region_restricts_the_budget_to_one_measurement(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        """
@pytest.mark.neuron_budget(max_ops=1, region="fused")
def test_only_fused_is_budgeted(neuron_profile, xw):
    neuron_profile(naive, *xw)          # 6 ops, but not the budgeted region
    neuron_profile(fused, *xw)

@pytest.mark.neuron_budget(max_ops=1, region="fused")
def test_budgeted_region_never_measured(neuron_profile, xw):
    neuron_profile(naive, *xw)

@pytest.mark.neuron_budget(max_ops=1)
def test_measured_nothing(neuron_profile, xw):
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines_random(
        [
            "*neuron_budget: region 'fused' was never measured; the test measured 'naive'*",
            "*neuron_budget: the test measured nothing*",
        ]
    )


def test_regions_nested_and_empty_are_measured(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        """
def test_regions(neuron_profile, xw):
    with neuron_profile.region("outer"):
        naive(*xw)
        with neuron_profile.region("inner"):
            fused(*xw)
    with neuron_profile.region("empty"):
        pass
    assert neuron_profile["outer"].ops == 7
    assert neuron_profile["inner"].ops == 1
    assert neuron_profile.last.region == "empty" and neuron_profile.last.ops == 0
""",
    )
    result = run(pytester, "--neuron-profile", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*region 'empty' dispatched no ops*"])


def test_exception_in_measured_code_propagates_and_next_test_is_unaffected(
    pytester: pytest.Pytester,
) -> None:
    write(
        pytester,
        """
def boom(x):
    torch.relu(x)
    raise KeyError("from the model")

def test_raises(neuron_profile, xw):
    neuron_profile(boom, xw[0])

@pytest.mark.neuron_budget(max_ops=6)
def test_next(neuron_profile, xw):
    neuron_profile(naive, *xw)
""",
    )
    result = run(pytester, "--neuron-profile")
    result.assert_outcomes(passed=1, failed=1)
    # The user's own exception, unchanged; test_next passing shows the profiler was stopped.
    result.stdout.fnmatch_lines(["*KeyError: 'from the model'*"])


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("max_op=1", "*has no argument max_op (did you mean max_ops?); known: max_device_us*"),
        ("max_ops=-1", "*neuron_budget max_ops=-1: expected a whole number >= 0*"),
        ("max_kernels=-2", "*neuron_budget max_kernels=-2: expected a whole number >= 0*"),
        ("max_device_us='fast'", "*max_device_us='fast': expected a number of microseconds > 0*"),
        ("max_host_us=0", "*max_host_us=0: expected a number of microseconds > 0*"),
        ("5", "*neuron_budget takes keyword arguments only*"),
        ("region=''", "*region='': expected the name of a measurement*"),
    ],
)
def test_bad_marker_is_a_usage_error_at_collection(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    write(
        pytester,
        f"""
RAN = []

@pytest.mark.neuron_budget({marker})
def test_it(neuron_profile, xw):
    RAN.append(1)
""",
    )
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_it.py::test_it: *" + message.lstrip("*")])
    result.assert_outcomes()  # nothing ran


def test_marker_on_a_test_without_the_fixture_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        """
@pytest.mark.neuron_budget(max_ops=1)
def test_forgot_fixture(xw):
    naive(*xw)
""",
    )
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*test_forgot_fixture: has a neuron_budget marker but does not "
            "use the neuron_profile fixture*"
        ]
    )


@pytest.mark.parametrize("backend", ["cuda", "neuron"])
def test_unavailable_backend_is_one_usage_error(pytester: pytest.Pytester, backend: str) -> None:
    write(
        pytester,
        """
def test_a(neuron_profile, xw):
    neuron_profile(naive, *xw)

def test_b(neuron_profile, xw):
    neuron_profile(naive, *xw)
""",
    )
    result = run(pytester, "--neuron-profile", f"--neuron-profile-backend={backend}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.count(f"backend '{backend}' is unavailable") == 1
    assert "Traceback" not in err
    assert "--neuron-profile-backend=auto or cpu" in err


def test_bad_setting_names_its_source(pytester: pytest.Pytester) -> None:
    write(pytester, "\ndef test_a(neuron_profile): pass\n")
    pytester.makeini("[pytest]\nneuron_profile_rounds = many\n")
    result = run_plain(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*tox.ini key neuron_profile_rounds='many': expected*"])


def run_plain(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def test_settings_precedence_cli_over_env_over_ini(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        pytester,
        """
def test_rounds(neuron_profile, xw):
    neuron_profile(naive, *xw)
    print("ROUNDS", neuron_profile.last.rounds, neuron_profile.last.warmup_rounds)
""",
    )
    pytester.makeini(
        "[pytest]\nneuron_profile = true\nneuron_profile_rounds = 2\nneuron_profile_warmup = 0\n"
    )
    assert "ROUNDS 2 0" in run_plain(pytester, "-s").stdout.str()  # ini turns profiling on
    monkeypatch.setenv("NEURONPERF_ROUNDS", "4")
    assert "ROUNDS 4 0" in run_plain(pytester, "-s").stdout.str()
    result = run_plain(pytester, "-s", "--neuron-profile-rounds=5")
    assert "ROUNDS 5 0" in result.stdout.str()
    monkeypatch.setenv("NEURONPERF_ROUNDS", "zero")
    result = run_plain(pytester)
    result.stderr.fnmatch_lines(["*environment variable NEURONPERF_ROUNDS='zero'*"])


def test_per_call_overrides_and_names(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        """
def test_overrides(neuron_profile, xw):
    neuron_profile(naive, *xw, rounds=2, warmup=0)
    with pytest.warns(UserWarning, match="'naive' is measured again in this test"):
        neuron_profile(naive, *xw)
    neuron_profile.measure(naive, xw, name="explicit")
    assert [m.region for m in neuron_profile.measurements] == ["naive", "naive#2", "explicit"]
    assert neuron_profile["naive"].rounds == 2
    assert neuron_profile["naive#2"].rounds == 3
""",
    )
    run(pytester, "--neuron-profile").assert_outcomes(passed=1)


@pytest.mark.slow  # xdist workers in a subprocess
def test_xdist_workers_report_every_measurement_once(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        """
@pytest.mark.parametrize("i", range(4))
def test_many(neuron_profile, xw, i):
    neuron_profile(naive, *xw, name=f"naive{i}")
""",
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
        "--neuron-profile",
        "--neuron-profile-rounds=2",
        "-W",
        "ignore::DeprecationWarning",
    )
    result.assert_outcomes(passed=4)
    out = result.stdout.str()
    for i in range(4):
        assert out.count(f" naive{i} ") == 1, out


def test_work_counting_can_be_turned_off(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        """
def test_counted(neuron_profile, xw):
    neuron_profile(naive, *xw)
    print("WORK", neuron_profile.last.work is not None)
""",
    )
    assert "WORK True" in run(pytester, "--neuron-profile", "-s").stdout.str()
    result = run(pytester, "--neuron-profile", "-s", "--neuron-profile-work=off")
    assert "WORK False" in result.stdout.str()
    result = run(pytester, "--neuron-profile", "--neuron-profile-work=maybe")
    result.stderr.fnmatch_lines(["*--neuron-profile-work='maybe': expected true/false*"])
