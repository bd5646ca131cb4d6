"""FLOPs and bytes of small regions against hand-computed values, on real dispatch-mode
and profiler output (and FlopCounterMode, whose registry the counter reuses)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils.flop_counter import FlopCounterMode

from pytest_neuronperf.model import OpWork, Work, roofline
from pytest_neuronperf.work.counting import count_work

F32 = 4
ROWS, HIDDEN, EPS = 4, 64, 1e-6


def naive(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS) * w


def fused(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.rms_norm(x, (HIDDEN,), w, EPS)


@pytest.fixture(scope="module")
def xw() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return torch.randn(ROWS, HIDDEN), torch.randn(HIDDEN)


# Both RMSNorm forms: 4 FLOPs per element (square, sum, scale, weight) + 2 per row.
RMS_FLOPS = 4 * ROWS * HIDDEN + 2 * ROWS
X = ROWS * HIDDEN * F32
W = HIDDEN * F32
ROW = ROWS * F32


def test_matmul_flops_match_flop_counter_and_2mnk() -> None:
    m, k, n = 8, 16, 4
    a, b = torch.randn(m, k), torch.randn(k, n)
    with FlopCounterMode(display=False) as counter:
        torch.mm(a, b)
    _, work = count_work(torch.mm, (a, b))
    assert work.flops == counter.get_total_flops() == 2 * m * n * k
    assert (work.bytes_read, work.bytes_written) == ((m * k + k * n) * F32, m * n * F32)
    assert work.uncounted == ()
    assert work.dtype == "float32"


def test_linear_is_one_dispatch_reading_weight_bias_input() -> None:
    lin = torch.nn.Linear(16, 4)
    x = torch.randn(8, 16)
    _, work = count_work(lin, (x,))
    # The profiler's top-level op is aten::linear; t() is a view and moves nothing.
    assert [o.name for o in work.per_op] == ["aten::linear"]
    assert work.flops == 2 * 8 * 16 * 4  # addmm's formula counts the matmul only
    assert work.bytes_read == (8 * 16 + 16 * 4 + 4) * F32
    assert work.bytes_written == 8 * 4 * F32


def test_elementwise_op_one_flop_per_output_element() -> None:
    a, b = torch.randn(32, 8), torch.randn(8)  # broadcast: b is read once, 8 elements
    _, work = count_work(torch.add, (a, b))
    assert work.flops == 32 * 8
    assert work.bytes_read == (32 * 8 + 8) * F32
    assert work.bytes_written == 32 * 8 * F32


def test_same_tensor_twice_is_read_once_per_dispatch() -> None:
    x = torch.randn(16, 16)
    _, work = count_work(lambda t: t * t, (x,))
    assert (work.bytes_read, work.bytes_written) == (16 * 16 * F32, 16 * 16 * F32)


def test_naive_rmsnorm_six_dispatches_full_tensors(xw: tuple[torch.Tensor, torch.Tensor]) -> None:
    out, work = count_work(naive, xw)
    torch.testing.assert_close(out, fused(*xw))
    assert work.flops == RMS_FLOPS
    ops = {o.name: o for o in work.per_op}
    assert ops["aten::mul"] == OpWork(
        "aten::mul",
        calls=3,
        flops=3 * ROWS * HIDDEN,
        # x*x reads x once; *rsqrt reads x and the row scale; *w reads the product and w.
        bytes_read=X + (X + ROW) + (X + W),
        bytes_written=3 * X,
    )
    assert ops["aten::mean"] == OpWork("aten::mean", 1, ROWS * HIDDEN, X, ROW)
    assert ops["aten::add"] == OpWork("aten::add", 1, ROWS, ROW, ROW)
    assert ops["aten::rsqrt"] == OpWork("aten::rsqrt", 1, ROWS, ROW, ROW)
    assert work.bytes_read == 4 * X + W + 3 * ROW
    assert work.bytes_written == 3 * X + 3 * ROW


def test_fused_rmsnorm_reads_x_and_w_writes_y(xw: tuple[torch.Tensor, torch.Tensor]) -> None:
    _, work = count_work(fused, xw)
    # Under a dispatch mode rms_norm decomposes into six ops; the profiler still shows the
    # one top-level aten::rms_norm they run under, and that is the boundary.
    assert work.per_op == (OpWork("aten::rms_norm", 1, RMS_FLOPS, X + W, X),)
    _, naive_work = count_work(naive, xw)
    assert work.flops == naive_work.flops
    # The six dispatches of the naive version (test above): 3.3x the bytes here.
    assert naive_work.bytes_moved == (4 * X + W + 3 * ROW) + (3 * X + 3 * ROW)


def test_two_calls_of_one_op_are_two_boundaries() -> None:
    a = torch.randn(8, 8)
    _, work = count_work(lambda t: (t + 1) + 1, (a,))
    # The intermediate is written by the first add and read back by the second.
    assert work.per_op == (OpWork("aten::add", 2, 128, 2 * 64 * F32, 2 * 64 * F32),)


def test_matrix_vector_rule() -> None:
    a, v = torch.randn(8, 16), torch.randn(16)
    _, work = count_work(torch.matmul, (a, v))
    assert work.flops == 2 * 8 * 16
    assert [o.name for o in work.per_op] == ["aten::matmul"]


def test_uncounted_ops_are_listed() -> None:
    a = torch.randn(8, 8)
    _, work = count_work(torch.linalg.det, (a,))
    assert work.uncounted  # LU factorisation has no FLOP rule
    assert all(name.startswith("aten::") for name in work.uncounted)


def test_softmax_rule() -> None:
    a = torch.randn(4, 32)
    _, work = count_work(lambda t: torch.softmax(t, -1), (a,))
    assert work.flops == 5 * 4 * 32
    assert work.uncounted == ()


def test_work_round_trips_through_dict(xw: tuple[torch.Tensor, torch.Tensor]) -> None:
    _, work = count_work(naive, xw)
    assert Work.from_dict(work.to_dict()) == work
    assert work.to_dict()["flops_beyond_torch"] == work.flops_beyond_torch != {}
    # A region torch counts all of writes no breakdown, and reads back an empty one.
    _, mm = count_work(torch.mm, (torch.randn(4, 4), torch.randn(4, 4)))
    assert "flops_beyond_torch" not in mm.to_dict() and Work.from_dict(mm.to_dict()) == mm


def test_counting_leaves_no_profiler_or_mode_behind(
    xw: tuple[torch.Tensor, torch.Tensor],
) -> None:
    count_work(naive, xw)
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    assert _get_current_dispatch_mode() is None
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        naive(*xw)
    assert not any(e.name.startswith("neuronperf.") for e in prof.events())


@pytest.mark.parametrize(
    ("flops", "nbytes", "bound", "fraction"),
    [
        # intensity 0.5 FLOP/B * 10 B/s = 5 FLOP/s < 100: memory bound; achieved 10 B/s.
        (5e6, 10e6, "memory", 1.0),
        (50e6, 1e6, "compute", 0.5),  # intensity 50 * 10 = 500 > 100: compute bound
        (0.0, 5e6, "memory", 0.5),  # pure data movement still has a memory roofline
    ],
)
def test_roofline_picks_the_bound_that_applies(
    flops: float, nbytes: float, bound: str, fraction: float
) -> None:
    r = roofline(flops, nbytes, device_us=1e6, peak_flops=100e6, peak_bw=10e6)
    assert r is not None
    assert r.bound == bound
    assert r.fraction == pytest.approx(fraction)


def test_roofline_needs_time_and_work() -> None:
    assert roofline(1.0, 1.0, 0.0, 1.0, 1.0) is None
    assert roofline(0.0, 0.0, 1.0, 1.0, 1.0) is None


Fn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@pytest.fixture(scope="module")
def compiled(xw: tuple[torch.Tensor, torch.Tensor]) -> Fn:
    fn: Fn = torch.compile(naive)
    fn(*xw)
    return fn


def _top_level(fn: Fn, xw: tuple[torch.Tensor, torch.Tensor]) -> list[str]:
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn(*xw)
    return [e.name for e in prof.events() if e.cpu_parent is None]


@pytest.mark.slow  # torch.compile
def test_compiled_counts_graph_inputs_and_outputs(
    compiled: Fn, xw: tuple[torch.Tensor, torch.Tensor]
) -> None:
    out, work = count_work(compiled, xw)
    torch.testing.assert_close(out, fused(*xw))
    # The frame id in the name depends on what else this process compiled.
    (region,) = work.per_op
    assert region.name.startswith("Torch-Compiled Region: ")
    assert (work.bytes_read, work.bytes_written) == (X + W, X)
    assert work.flops == RMS_FLOPS  # from the eager pass, since the graph shows no ops
    # Counting did not make dynamo skip the code: it still runs compiled.
    assert region.name in _top_level(compiled, xw)


@pytest.mark.slow  # torch.compile
def test_compiled_region_has_its_breakdown_beside_torch(
    compiled: Fn, xw: tuple[torch.Tensor, torch.Tensor]
) -> None:
    """The graph shows no aten ops: the breakdown comes from the eager pass, as its FLOPs."""
    _, work = count_work(compiled, xw)
    n = ROWS * HIDDEN
    assert work.flops_beyond_torch == {
        "aten::mul": 3 * n,
        "aten::mean": n,
        "aten::add": ROWS,
        "aten::rsqrt": ROWS,
    }
    assert work.flops - sum(work.flops_beyond_torch.values()) == 0  # no matmul to count


@pytest.mark.slow  # torch.compile
def test_compiled_between_eager_ops(compiled: Fn, xw: tuple[torch.Tensor, torch.Tensor]) -> None:
    x, w = xw
    _, work = count_work(lambda a, b: compiled(a + 1, b) * 2, (x, w))
    ops = {o.name.split(":")[0]: o for o in work.per_op}
    assert set(ops) == {"aten", "Torch-Compiled Region"} and len(work.per_op) == 3
    assert ops["Torch-Compiled Region"].bytes_moved == X + W + X
    assert ops["Torch-Compiled Region"].flops == RMS_FLOPS
    assert work.flops == RMS_FLOPS + 2 * ROWS * HIDDEN


def test_cpu_fused_attention_flops_are_its_two_matmuls_counted_by_hand() -> None:
    """Issue 25, item 8: SDPA on CPU dispatches _scaled_dot_product_flash_attention_for_cpu,
    which torch's flop counter leaves out; it does q @ k^T and p @ v, as naive attention."""
    b, h, length, s, e = 2, 4, 16, 24, 8
    q = torch.randn(b, h, length, e)
    k, v = torch.randn(b, h, s, e), torch.randn(b, h, s, e)
    _, work = count_work(torch.nn.functional.scaled_dot_product_attention, (q, k, v))
    (op,) = work.per_op
    assert op.name == "aten::scaled_dot_product_attention" and not work.uncounted
    by_hand = 0
    for _ in range(b * h * length * s):  # each score: e multiply-adds, then e more for p @ v
        by_hand += 2 * e + 2 * e
    assert work.flops == by_hand == 2 * b * h * length * s * (e + e)


def _aten_name(packet: object) -> str:
    """FlopCounterMode's key (the packet ``aten.mm``) as our op names write it."""
    return str(packet).replace(".", "::", 1)


def test_pointwise_and_reduction_flops_are_the_breakdown_beside_torch() -> None:
    """Issue 35, item 4: the FLOPs torch's FlopCounterMode leaves out, by op."""
    a, b = torch.randn(6, 10), torch.randn(10, 5)
    _, work = count_work(lambda x, y: (torch.mm(x, y) * 2).sum(), (a, b))
    by_hand = {"aten::mul": 0, "aten::sum": 0}
    for _ in range(6 * 5):  # each element of the product: one multiply, one add to the sum
        by_hand["aten::mul"] += 1
        by_hand["aten::sum"] += 1
    assert work.flops_beyond_torch == by_hand
    # mm is torch's (its registry): all of the rest, and none of the breakdown.
    assert work.flops - sum(by_hand.values()) == 2 * 6 * 5 * 10


def _tiny_llama(attention: str) -> torch.nn.Module:
    """A two-layer Llama from a config, random weights: nothing is downloaded."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=128,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    llama = LlamaForCausalLM(config)
    llama.set_attn_implementation(attention)
    assert llama.config._attn_implementation == attention
    model: torch.nn.Module = llama
    return model.eval()


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
def test_tiny_llama_less_the_breakdown_is_flop_counter_modes_count(attention: str) -> None:
    """Issue 35, item 4: the matmuls (torch's registry) are FlopCounterMode's count exactly;
    what we count beyond it is in the breakdown, by ops FlopCounterMode does not count."""
    model = _tiny_llama(attention)
    ids = torch.randint(0, 128, (1, 16), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        with FlopCounterMode(display=False) as counter:
            model(ids)
        _, work = count_work(model, (ids,))
    beyond = work.flops_beyond_torch
    assert beyond and all(n > 0 for n in beyond.values())
    assert work.flops - sum(beyond.values()) == counter.get_total_flops() > 0
    theirs = {_aten_name(p) for p in counter.get_flop_counts()["Global"]}
    assert "aten::mm" in theirs and not theirs & set(beyond)
    # Eager attention's matmuls are bmm (torch's); SDPA's CPU kernel is one torch leaves out.
    sdpa = "aten::_scaled_dot_product_flash_attention_for_cpu"
    assert (sdpa in beyond) == (attention == "sdpa")
    assert ("aten::bmm" in theirs) == (attention == "eager")
