"""Each specialised kernel path against an independent reference.

The kernels pick a path by the geometry of a call: tiling windows (kernel ==
stride <= 4, no padding, no depth pooling), global reductions, long window
rows (8+ taps: lane reductions), the vectorised interior argmax, the
vertical-first argmax of adaptive bins and narrow rows, float16 / bfloat16
widened row by row. The other test files reach them through random cases;
here every path is pinned with shapes chosen to select it (the
channel-blocked kernel, which takes small planes and has tests of its own in
test_blocked.py, turned off), in every dtype, with and without NaN, against
PyTorch or numpy.
"""

import functools

import numpy as np
import pytest

import ovpool
from ovpool import _core

torch = pytest.importorskip("torch")
F = torch.nn.functional

RNG = np.random.default_rng(20261122)


@pytest.fixture(autouse=True)
def _paths_of_large_planes():
    """The channel-blocked kernel off: these small shapes pin other paths."""
    saved = _core.TUNING.get("blocked_bytes")
    _core.TUNING["blocked_bytes"] = 0
    _core._cache.clear()
    yield
    if saved is None:
        _core.TUNING.pop("blocked_bytes", None)
    else:
        _core.TUNING["blocked_bytes"] = saved
    _core._cache.clear()


def _t(x):
    return torch.from_numpy(np.ascontiguousarray(x))


def _with_nans(x, count=5):
    x = x.copy()
    flat = x.reshape(-1)
    flat[RNG.choice(flat.size, count, replace=False)] = np.nan
    return x


# -- tiling windows -----------------------------------------------------------

TILES = [(kh, kw) for kh in (1, 2, 3, 4) for kw in (1, 2, 3, 4) if (kh, kw) != (1, 1)]


@pytest.mark.parametrize("kh, kw", TILES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiling_average_matches_torch_bit_for_bit(kh, kw, dtype):
    """2D tiles, odd trailing rows/columns dropped by floor rounding; the taps
    are summed in row-major order, as PyTorch does, so the bits agree."""
    x = RNG.standard_normal((2, 5, 4 * kh + 1, 5 * kw + 2)).astype(dtype)
    got = ovpool.avg_pool(x, (kh, kw), strides=(kh, kw))
    want = F.avg_pool2d(_t(x), (kh, kw), (kh, kw)).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kh, kw", TILES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint8])
def test_tiling_max_matches_numpy(kh, kw, dtype):
    if np.dtype(dtype).kind == "f":
        x = _with_nans(RNG.standard_normal((2, 3, 4 * kh, 3 * kw + 1)).astype(dtype))
    else:
        info = np.iinfo(dtype)
        x = RNG.integers(info.min, info.max, (2, 3, 4 * kh, 3 * kw + 1), endpoint=True).astype(
            dtype
        )
    got = ovpool.max_pool(x, (kh, kw), strides=(kh, kw))
    oh, ow = x.shape[2] // kh, x.shape[3] // kw
    blocks = x[:, :, : oh * kh, : ow * kw].reshape(2, 3, oh, kh, ow, kw)
    want = blocks.max(axis=(3, 5))  # numpy's max propagates NaN
    np.testing.assert_array_equal(got, want)


def _lp_tiles_in_order(x, kh, kw, p):
    """Lp norms of p 1 and 2 over tiles in the documented order: |x| or
    x * x of each tap in float32 (float64 stays float64), added in
    row-major window order from the first tap, then the square root."""
    compute = np.float64 if x.dtype == np.float64 else np.float32
    v = x.astype(compute)
    oh, ow = x.shape[-2] // kh, x.shape[-1] // kw
    acc = None
    for t in range(kh):
        for u in range(kw):
            tap = v[..., t : oh * kh : kh, u : ow * kw : kw]
            tap = np.abs(tap) if p == 1 else tap * tap
            acc = tap if acc is None else acc + tap
    return (acc if p == 1 else np.sqrt(acc)).astype(x.dtype)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_tiling_lp_norms_sum_in_row_major_order(p, dtype):
    """Lp tilings of p 1 and 2 take the tiling path (the vector blocks for
    kw 1, 2 and 4 at 4+ outputs a row, the scalar passes otherwise): bit for
    bit the documented order (numpy, above), and within rounding of
    PyTorch's lp_pool2d in float64; NaN and infinity propagate."""
    dt = _bfloat16() if dtype == "bfloat16" else np.dtype(dtype)
    for kh, kw in TILES:
        for out_w in (2, 3, 5, 8, 17):
            x = RNG.standard_normal((2, 5, 3 * kh + 1, out_w * kw + 1)).astype(np.float32)
            x.reshape(-1)[[7, 40]] = [np.nan, np.inf]
            x = x.astype(dt)
            _core._cache.clear()
            got = ovpool.lp_pool(x, (kh, kw), strides=(kh, kw), p=p)
            assert [plan.path for plan in _core.cached_plans()] == ["tiles"]
            want = _lp_tiles_in_order(x, kh, kw, p)
            assert got.dtype == x.dtype
            # widened exactly, so that NaN compares as NaN for bfloat16 too
            np.testing.assert_array_equal(
                got.astype(np.float64), want.astype(np.float64), err_msg=f"{kh}x{kw} on {x.shape}"
            )
            # (PyTorch sums x, not |x|, for p 1: given |x|)
            ref = F.lp_pool2d(_t(np.abs(x.astype(np.float64))), p, (kh, kw), (kh, kw)).numpy()
            finite = np.isfinite(ref)
            assert np.array_equal(np.isnan(got.astype(np.float64)), np.isnan(ref))
            tol = 1e-2 if np.dtype(dt).itemsize == 2 else 1e-6
            np.testing.assert_allclose(got.astype(np.float64)[finite], ref[finite], rtol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8"])
def test_one_element_windows_pool_planes_as_rows(dtype, monkeypatch):
    """Pools whose every window is one element (an adaptive pool to its
    input's size, as VGG's head is at 224x224; kernel 1 at stride 1; a width
    of 1 padded by 1 under a 3-wide kernel, without counting pads) take groups
    of whole planes as rows of 1x1 tiles, with the channel-blocked kernel on
    (the default): 1D, 2D and 3D, planes shorter and longer than a row, at 1
    and 2 threads. Each output is its one element bit for bit, NaN, infinity
    and -0 included (a maximum of one, a sum of one divided by 1, |x| for
    Lp 1); PyTorch's pools give the same values (their sums start from +0,
    so -0 compares equal, not identical); Lp 2 within rounding of PyTorch's
    lp_pool (x * x, then its square root)."""
    monkeypatch.delitem(_core.TUNING, "blocked_bytes", raising=False)
    dt = _bfloat16() if dtype == "bfloat16" else np.dtype(dtype)
    for shape in [(2, 24, 7, 7), (2, 8, 50), (3, 5, 3, 4, 5), (1, 2, 70, 70)]:
        x = RNG.standard_normal(shape).astype(np.float32) * 4
        x.reshape(-1)[[3, 11, 20, 29]] = [np.nan, np.inf, -np.inf, -0.0]
        if dtype == "int8":
            x = np.nan_to_num(x, posinf=127, neginf=-128)
        x = x.astype(dt)
        rank = len(shape) - 2
        wide = x.astype(np.float64)
        t = _t(x.astype(np.float32))
        pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[rank]
        max_pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[rank]
        adaptive = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d}.get(
            rank, F.adaptive_avg_pool3d
        )
        calls = [("max", lambda th: ovpool.max_pool(x, (1,) * rank, num_threads=th))]
        if dtype != "int8":
            calls += [
                ("avg", lambda th: ovpool.avg_pool(x, (1,) * rank, num_threads=th)),
                ("adaptive", lambda th: ovpool.adaptive_avg_pool(x, shape[2:], num_threads=th)),
                ("lp1", lambda th: ovpool.lp_pool(x, (1,) * rank, p=1, num_threads=th)),
                ("lp2", lambda th: ovpool.lp_pool(x, (1,) * rank, p=2, num_threads=th)),
            ]
        if rank == 2 and dtype != "int8":
            calls.append(
                (
                    "avg",
                    lambda th: ovpool.avg_pool(
                        x[..., :1], (1, 3), strides=(1, 1), pads=(0, 1, 0, 1), num_threads=th
                    ),
                )
            )
        for name, call in calls:
            _core._cache.clear()
            got = call(1)
            assert [plan.path for plan in _core.cached_plans()] == ["tiles"], name
            assert "windows of one element" in _core.cached_plans()[0].explain(1)
            np.testing.assert_array_equal(call(2).view(np.uint8), got.view(np.uint8))
            assert got.dtype == x.dtype
            message = f"{name} on {shape} {dtype}"
            if got.shape[-1] == 1:  # the padded width of 1: its first column
                want = wide[..., :1]
                ref = F.avg_pool2d(t[..., :1], (1, 3), 1, (0, 1), count_include_pad=False)
                ref = ref.numpy()
            elif name == "max":
                want, ref = wide, max_pool(t, 1).numpy()
            elif name == "avg":
                want, ref = wide, pool(t, 1).numpy()
            elif name == "adaptive":
                want, ref = wide, adaptive(t, shape[2:]).numpy()
            else:  # (PyTorch sums x, not |x|, for p 1: given |x|)
                p = int(name[2])
                want = np.abs(wide)
                ref = F.lp_pool1d(t.abs().reshape(1, 1, -1), p, 1).numpy().reshape(shape)
            got64, ref64 = got.astype(np.float64), ref.astype(dt).astype(np.float64)
            if name != "lp2":
                # bit for bit: the same sign of each zero, NaN where NaN
                np.testing.assert_array_equal(np.signbit(got64), np.signbit(want), err_msg=message)
                np.testing.assert_array_equal(got64, want, err_msg=message)
                np.testing.assert_array_equal(got64, ref64, err_msg=message)
            else:
                np.testing.assert_array_equal(np.isnan(got64), np.isnan(want), err_msg=message)
                finite = np.isfinite(want)
                for other in (want, ref64):
                    np.testing.assert_allclose(
                        got64[finite], other[finite], rtol=1e-6, err_msg=message
                    )


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_tiling_prefetching_ahead(dtype, monkeypatch):
    """Large inputs of tiling windows prefetch the input 8 KiB ahead of each
    run of rows (plan.hpp's Tuning::tile_prefetch_min_bytes, lowered here so that small
    inputs do it too; past the end of the input as well, which prefetches
    may). The values do not change: against torch and numpy, and bit for bit
    against the same calls without the prefetch, rows of 4-7 outputs (two rows
    at a time in float16) and of 8+."""
    x = RNG.standard_normal((2, 3, 28, 56)).astype(dtype)
    calls = [
        lambda: ovpool.max_pool(x, (2, 2), strides=(2, 2)),
        lambda: ovpool.avg_pool(x, (2, 2), strides=(2, 2)),
        lambda: ovpool.adaptive_avg_pool(x, (7, 14)),  # 4x4 tiles
        lambda: ovpool.adaptive_avg_pool(x[..., :28], 7),
    ]  # rows of 7 outputs
    _core._cache.clear()
    without = [call() for call in calls]
    assert all(plan.path == "tiles" and plan.tile_ahead == 0 for plan in _core.cached_plans())
    monkeypatch.setitem(_core.TUNING, "tile_prefetch_min_bytes", 0)
    _core._cache.clear()
    for call, want in zip(calls, without):
        np.testing.assert_array_equal(call(), want)
    plans = _core.cached_plans()
    assert plans and all(plan.path == "tiles" and plan.tile_ahead > 0 for plan in plans)
    tx = _t(x.astype(np.float32))
    tol = dict(rtol=1e-3, atol=1e-3) if dtype == np.float16 else dict(rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(without[0], F.max_pool2d(tx, 2, 2).numpy().astype(dtype))
    np.testing.assert_allclose(without[1], F.avg_pool2d(tx, 2, 2).numpy(), **tol)
    np.testing.assert_allclose(without[2], F.avg_pool2d(tx, 4, 4).numpy(), **tol)
    np.testing.assert_allclose(without[3], F.avg_pool2d(tx[..., :28], 4, 4).numpy(), **tol)
    _core._cache.clear()


@pytest.mark.parametrize("kw", [1, 2, 4])
@pytest.mark.parametrize("out_w", [4, 5, 7, 8, 9, 12, 16, 17, 23, 28])
def test_tiling_vector_blocks_every_row_width(kw, out_w):
    """float32 rows of 4+ outputs go through the SSE/AVX blocks of _simd.h:
    whole blocks, an overlapping last block, pairs of blocks; the average
    stays bit-exact with torch (power-of-two divisors are multiplied), the
    maximum keeps NaN."""
    for kh in (1, 2, 3):
        if (kh, kw) == (1, 1):
            continue
        x = RNG.standard_normal((2, 3, 3 * kh + 1, out_w * kw + 1)).astype(np.float32)
        got = ovpool.avg_pool(x, (kh, kw), strides=(kh, kw))
        want = F.avg_pool2d(_t(x), (kh, kw), (kh, kw)).numpy()
        np.testing.assert_array_equal(got, want)
        x = _with_nans(x, count=3)
        got = ovpool.max_pool(x, (kh, kw), strides=(kh, kw))
        want = F.max_pool2d(_t(x), (kh, kw), (kh, kw)).numpy()
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kw", [1, 2, 4])
@pytest.mark.parametrize("out_w", [4, 5, 7, 8, 9, 16, 17, 28])
def test_tiling_indices_every_row_width_against_torch(kw, out_w):
    """float32 tiles with indices: the vector argmax of _simd.h (values and
    offsets in permuted lanes), with ties (small integers) and NaN; ONNX
    indices over the whole tensor, row- and column-major."""
    for kh in (1, 2, 3):
        if (kh, kw) == (1, 1):
            continue
        shape = (2, 3, 3 * kh + 1, out_w * kw + 1)
        x = _with_nans(np.round(RNG.standard_normal(shape) * 1.5).astype(np.float32), count=4)
        tv, ti = F.max_pool2d(_t(x), (kh, kw), (kh, kw), return_indices=True)
        tv, ti = tv.numpy(), ti.numpy()
        values, indices = ovpool.max_pool(x, (kh, kw), strides=(kh, kw), return_indices=True)
        h, w = shape[2:]
        planes = np.arange(6).reshape(2, 3, 1, 1) * h * w
        np.testing.assert_array_equal(values, tv)
        np.testing.assert_array_equal(indices, ti + planes)
        _, indices = ovpool.max_pool(
            x, (kh, kw), strides=(kh, kw), return_indices=True, storage_order=1
        )
        np.testing.assert_array_equal(indices, ti // w + (ti % w) * h + planes)
        if h % kh == 1 and w % kw == 1:
            values, indices = ovpool.adaptive_max_pool(x[:, :, :-1, :-1], (3, out_w))
            np.testing.assert_array_equal(values, tv)
            np.testing.assert_array_equal(indices, ti // w * (w - 1) + ti % w)


@pytest.mark.parametrize(
    "kernel,stride,pad,dilation",
    [
        ((3, 3), (2, 2), (1, 1), (1, 1)),
        ((3, 3), (1, 1), (1, 1), (1, 1)),
        ((3, 3), (2, 1), (1, 1), (2, 2)),
        ((2, 3), (1, 2), (1, 1), (3, 2)),
        ((3, 5), (2, 3), (1, 2), (1, 2)),
        ((3, 7), (1, 1), (0, 3), (1, 1)),
    ],
)
def test_edge_windows_with_indices_against_torch(kernel, stride, pad, dilation):
    """float32 max pooling with indices on rows of 16+ interior outputs: the
    windows that meet the padding (left and right edges, top and bottom
    rows) take each window whole, without branches on the data
    (ovpool_window_argmax_f32), the interior the vector argmax. Ties (small
    integers) keep the first maximum in row-major order, NaN the last NaN;
    against torch, with dilations, and 3D with a depth kernel of 1."""
    x = _with_nans(np.round(RNG.standard_normal((2, 3, 13, 47)) * 1.5).astype(np.float32), count=40)
    tv, ti = F.max_pool2d(_t(x), kernel, stride, pad, dilation, return_indices=True)
    values, indices = ovpool.max_pool(
        x, kernel, strides=stride, pads=pad + pad, dilations=dilation, return_indices=True
    )
    planes = np.arange(6).reshape(2, 3, 1, 1) * 13 * 47
    np.testing.assert_array_equal(values, tv.numpy())
    np.testing.assert_array_equal(indices, ti.numpy() + planes)
    x3 = x.reshape(2, 3, 1, 13, 47).repeat(2, axis=2)
    x3[:, :, 1] += 1
    tv, ti = F.max_pool3d(
        _t(x3), (1,) + kernel, (1,) + stride, (0,) + pad, (1,) + dilation, return_indices=True
    )
    values, indices = ovpool.max_pool(
        x3,
        (1,) + kernel,
        strides=(1,) + stride,
        pads=(0,) + pad + (0,) + pad,
        dilations=(1,) + dilation,
        return_indices=True,
    )
    np.testing.assert_array_equal(values, tv.numpy())
    np.testing.assert_array_equal(indices, ti.numpy() + planes[..., None] * 2)


def test_edge_window_ties_and_nan_by_hand():
    """A 3-wide window at the left edge (pad 1) sees columns 0 and 1: the tie
    keeps column 0; at the right edge (columns 18, 19) the NaN after a 3
    wins."""
    row = np.arange(20, dtype=np.float32).reshape(1, 1, 1, 20) % 7
    row[..., 0] = row[..., 1] = 9
    row[..., 18] = 3
    row[..., 19] = np.nan
    values, indices = ovpool.max_pool(
        row, (1, 3), strides=(1, 1), pads=(0, 1, 0, 1), return_indices=True
    )
    # row: 9 9 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 3 nan
    assert values[0, 0, 0, 0] == 9 and indices[0, 0, 0, 0] == 0
    assert values[0, 0, 0, 1] == 9 and indices[0, 0, 0, 1] == 0
    assert values[0, 0, 0, 10] == 4 and indices[0, 0, 0, 10] == 11
    assert np.isnan(values[0, 0, 0, 18]) and indices[0, 0, 0, 18] == 19
    assert np.isnan(values[0, 0, 0, 19]) and indices[0, 0, 0, 19] == 19


def test_left_padded_window_in_the_vector_block_by_hand():
    """3-wide windows with W padding 1 take output 0 (columns -1..1) into
    the vector block as columns 0, 0, 1 (AVX2 builds): the tie of columns 0
    and 1 keeps column 0, a NaN in column 0 alone wins, NaN in both gives
    column 1, and over window rows the last NaN in row-major order wins."""
    x = np.tile(np.arange(34, dtype=np.float32) % 5, (4, 3, 1)).reshape(4, 1, 3, 34)
    x[0, 0, :, :2] = [[1, 1], [7, 7], [2, 2]]  # tie in the middle row
    x[1, 0, 0, 0] = np.nan  # a NaN in column 0 alone
    x[2, 0, 0, :2] = np.nan  # NaN in both columns
    x[3, 0, 0, 1] = x[3, 0, 1, 0] = np.nan  # (0, 1) then (1, 0)
    for stride in (1, 2):
        values, indices = ovpool.max_pool(
            x, (3, 3), strides=(1, stride), pads=(0, 1, 0, 1), return_indices=True
        )
        assert values.shape[-1] >= 17  # output 0 and 16+ interior ones
        assert values[0, 0, 0, 0] == 7 and indices[0, 0, 0, 0] == 34
        assert np.isnan(values[1, 0, 0, 0]) and indices[1, 0, 0, 0] == 1 * 102
        assert np.isnan(values[2, 0, 0, 0]) and indices[2, 0, 0, 0] == 2 * 102 + 1
        assert np.isnan(values[3, 0, 0, 0]) and indices[3, 0, 0, 0] == 3 * 102 + 34
        # output 1 (columns 0..2 at stride 1, 1..3 at stride 2): the same rules
        tv, ti = F.max_pool2d(_t(x), 3, (1, stride), (0, 1), return_indices=True)
        np.testing.assert_array_equal(values, tv.numpy())
        np.testing.assert_array_equal(indices, ti.numpy() + np.arange(4).reshape(4, 1, 1, 1) * 102)


@pytest.mark.parametrize("stride_h, stride_w", [(2, 2), (1, 1), (1, 2), (2, 1)])
@pytest.mark.parametrize("pad", [0, 1])
@pytest.mark.parametrize("out_w", [8, 13, 16, 41, 256, 263, 300])
def test_shared_window_rows_argmax_against_torch(stride_h, stride_w, pad, out_w):
    """3x3 windows with indices whose output rows step 1 or 2 input rows
    keep the window rows an output row shares with the next (AVX2 builds,
    ovpool_argrows_k3: chunks of 256 outputs). Ties (small integers) keep the
    first maximum in row-major order, across kept and new rows; a NaN -
    in column 0, at tap 0 of a chunk's first block, in a shared row, or
    anywhere - makes its chunk take the exact rule (the last NaN), and the
    other chunks keep theirs. Against torch, at 1 and 2 threads."""
    in_w = (out_w - 1) * stride_w + 3 - 2 * pad
    in_h = 5 * stride_h + 3 - 2 * pad
    base = np.round(RNG.standard_normal((3, 2, in_h, in_w)) * 1.2).astype(np.float32)
    chunk_tap0 = 256 * stride_w - pad  # tap 0 of output 256's window
    variants = [base, _with_nans(base, count=4)]
    for col in (0, chunk_tap0, in_w - 1):
        if col < in_w:
            x = base.copy()
            x[1, 0, 2 * stride_h, col] = np.nan  # window row 2 of row 0 = row 0 of row 2 at s2
            x[2, 1, 1, col] = np.nan
            variants.append(x)
    for x in variants:
        tv, ti = F.max_pool2d(_t(x), 3, (stride_h, stride_w), pad, return_indices=True)
        planes = np.arange(6).reshape(3, 2, 1, 1) * in_h * in_w
        for threads in (1, 2):
            values, indices = ovpool.max_pool(
                x,
                (3, 3),
                strides=(stride_h, stride_w),
                pads=(pad,) * 4,
                return_indices=True,
                num_threads=threads,
            )
            np.testing.assert_array_equal(values, tv.numpy())
            np.testing.assert_array_equal(indices, ti.numpy() + planes)


@pytest.mark.parametrize("width", [16, 17, 40, 41])
@pytest.mark.parametrize("pads", [(1, 1), (1, 0), (2, 2), (2, 1), (0, 1)])
def test_left_padded_window_against_onnx(width, pads):
    """Output 0 with W padding 1 in the vector block; with padding 2 (ONNX
    allows it, torch does not) output 0 sees column 0 only and stays on the
    scalar edge path. Ties from small integers; against the ONNX reference,
    and NaN against torch where torch takes the padding."""
    from references import onnx_pool_attrs, onnx_reference

    x = np.round(RNG.standard_normal((2, 3, 5, width)) * 1.5).astype(np.float32)
    for stride in (1, 2):
        attrs = onnx_pool_attrs((3, 3), strides=(2, stride), pads=(1, pads[0], 1, pads[1]))
        want, want_idx = onnx_reference("MaxPool", [x], attrs, n_outputs=2, opset=12)
        for n_threads in (1, 2):
            got, idx = ovpool.max_pool(
                x,
                (3, 3),
                strides=(2, stride),
                pads=(1, pads[0], 1, pads[1]),
                return_indices=True,
                num_threads=n_threads,
            )
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(idx, want_idx)
        if pads == (1, 1):
            xn = _with_nans(x, count=30)
            tv, ti = F.max_pool2d(_t(xn), 3, (2, stride), 1, return_indices=True)
            got, idx = ovpool.max_pool(
                xn, (3, 3), strides=(2, stride), pads=(1, 1, 1, 1), return_indices=True
            )
            np.testing.assert_array_equal(got, tv.numpy())
            np.testing.assert_array_equal(
                idx, ti.numpy() + np.arange(6).reshape(2, 3, 1, 1) * 5 * width
            )


@pytest.mark.parametrize(
    "kernel, strides, pads, ceil",
    [
        ((3, 3), (2, 2), (1, 1), False),  # left edge in the vector block, no right edge
        ((3, 3), (1, 1), (1, 1), False),  # edges on both sides, a short last window row
        ((3, 2), (2, 2), (1, 1), True),  # edges on both sides of every row's interior
        ((2, 3), (2, 2), (1, 0), True),  # the last output row's window has 1 row
    ],
)
def test_runs_of_rows_in_one_call_against_torch(kernel, strides, pads, ceil):
    """The vector argmax takes consecutive output rows whose windows have as
    many rows in one call (int64 row-major indices): the run ends where the
    window height changes (padding) and at the end of a depth slice, each
    row's edge windows stay its own. Small integers (ties) and NaN, one plane
    (a work unit of many rows) and many, 1 and 2 threads, 2D and 3D."""
    kh, kw = kernel
    for shape in ((2, 3, 13, 40), (1, 1, 16, 41)):
        x = np.round(RNG.standard_normal(shape) * 1.5).astype(np.float32)
        for xn in (x, _with_nans(x, count=6)):
            n, c, h, w = xn.shape
            tv, ti = F.max_pool2d(
                _t(xn), kernel, strides, pads, ceil_mode=ceil, return_indices=True
            )
            for n_threads in (1, 2):
                got, idx = ovpool.max_pool(
                    xn,
                    kernel,
                    strides=strides,
                    pads=pads * 2,
                    ceil_mode=ceil,
                    return_indices=True,
                    num_threads=n_threads,
                )
                np.testing.assert_array_equal(got, tv.numpy())
                np.testing.assert_array_equal(
                    idx, ti.numpy() + np.arange(n * c).reshape(n, c, 1, 1) * h * w
                )
    x3 = _with_nans(np.round(RNG.standard_normal((1, 2, 3, 11, 40)) * 1.5).astype(np.float32))
    tv, ti = F.max_pool3d(
        _t(x3), (1, kh, kw), (1,) + strides, (0,) + pads, ceil_mode=ceil, return_indices=True
    )
    for n_threads in (1, 2):
        got, idx = ovpool.max_pool(
            x3,
            (1, kh, kw),
            strides=(1,) + strides,
            pads=((0,) + pads) * 2,
            ceil_mode=ceil,
            return_indices=True,
            num_threads=n_threads,
        )
        np.testing.assert_array_equal(got, tv.numpy())
        np.testing.assert_array_equal(
            idx, ti.numpy() + np.arange(2).reshape(1, 2, 1, 1, 1) * 3 * 11 * 40
        )


def test_signed_zero_ties_keep_the_first_zero():
    """-0.0 and +0.0 tie under ">": the first in row-major window order gives
    the value and its sign, on every argmax path (the vector blocks, the
    tilings, the vertical-first tables, the edges), as torch. Equal-compare
    tests cannot see a wrong sign. (Values alone are not asked for a sign:
    the separable max passes see the zeros in another order.)"""
    x = RNG.choice(np.array([-0.0, 0.0, -1.0], np.float32), size=(2, 3, 50, 50))
    calls = [
        (
            lambda a: ovpool.max_pool(
                a, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), return_indices=True
            ),
            lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True),
        ),
        (
            lambda a: ovpool.max_pool(a, (2, 2), strides=(2, 2), return_indices=True),
            lambda t: F.max_pool2d(t, 2, 2, return_indices=True),
        ),
        (lambda a: ovpool.adaptive_max_pool(a, 7), lambda t: F.adaptive_max_pool2d(t, 7, True)),
        (
            lambda a: ovpool.adaptive_max_pool(a[..., :28, :28], 7),
            lambda t: F.adaptive_max_pool2d(t[..., :28, :28], 7, True),
        ),
        (lambda a: ovpool.adaptive_max_pool(a, 3), lambda t: F.adaptive_max_pool2d(t, 3, True)),
    ]
    for dtype in (np.float32, np.float64):
        for ours, theirs in calls:
            (values, _), (tv, _) = ours(x.astype(dtype)), theirs(_t(x.astype(dtype)))
            np.testing.assert_array_equal(np.signbit(values), np.signbit(tv.numpy()))
            assert np.signbit(values).any() and (~np.signbit(values)).any()


def test_tiling_3d_without_depth_pooling_and_1d():
    x = RNG.standard_normal((2, 3, 4, 8, 12)).astype(np.float32)
    np.testing.assert_array_equal(
        ovpool.avg_pool(x, (1, 2, 3), strides=(1, 2, 3)),
        F.avg_pool3d(_t(x), (1, 2, 3), (1, 2, 3)).numpy(),
    )
    np.testing.assert_array_equal(
        ovpool.max_pool(x, (1, 4, 4), strides=(1, 4, 4)),
        F.max_pool3d(_t(x), (1, 4, 4), (1, 4, 4)).numpy(),
    )
    # a row left over below the tiles of each depth slice: a run of output
    # rows ends with its slice; one plane (work units of a few rows) and many,
    # values alone and with indices (their runs of rows are one kernel call)
    y = RNG.standard_normal((2, 3, 5, 9, 13)).astype(np.float32)
    for planes in (y[:1, :1], y):
        n, c, d, h, w = planes.shape
        plane_starts = np.arange(n * c).reshape(n, c, 1, 1, 1) * (d * h * w)
        for n_threads in (1, 2):
            np.testing.assert_array_equal(
                ovpool.avg_pool(planes, (1, 2, 3), strides=(1, 2, 3), num_threads=n_threads),
                F.avg_pool3d(_t(planes), (1, 2, 3), (1, 2, 3)).numpy(),
            )
            np.testing.assert_array_equal(
                ovpool.max_pool(planes, (1, 2, 2), strides=(1, 2, 2), num_threads=n_threads),
                F.max_pool3d(_t(planes), (1, 2, 2), (1, 2, 2)).numpy(),
            )
            tv, ti = F.max_pool3d(_t(planes), (1, 2, 2), (1, 2, 2), return_indices=True)
            values, indices = ovpool.max_pool(
                planes, (1, 2, 2), strides=(1, 2, 2), return_indices=True, num_threads=n_threads
            )
            np.testing.assert_array_equal(values, tv.numpy())
            np.testing.assert_array_equal(indices, ti.numpy() + plane_starts)
    x1 = RNG.standard_normal((3, 4, 37)).astype(np.float32)
    np.testing.assert_array_equal(
        ovpool.avg_pool(x1, (3,), strides=(3,)), F.avg_pool1d(_t(x1), 3, 3).numpy()
    )
    np.testing.assert_array_equal(
        ovpool.adaptive_avg_pool(x1[..., :36], 9),
        F.adaptive_avg_pool1d(_t(x1[..., :36]), 9).numpy(),
    )


def _tiling_plan(shape, kernel):
    """The plan of a kernel == stride average of x of this shape, no padding."""
    _core._cache.clear()
    ovpool.avg_pool(np.zeros(shape, np.float32), kernel, strides=kernel)
    (plan,) = _core.cached_plans()
    assert plan.path == "tiles"
    return plan


@pytest.mark.parametrize(
    "shape, kernel",
    [
        ((2, 3, 8, 12), (2, 3)),  # 6 planes, one group
        ((5, 7, 28, 28), (4, 4)),  # 35 planes of 49 outputs: one group of 35
        ((3, 100, 8, 8), (2, 2)),  # 300 planes of 16 outputs: groups of 150
        ((2, 5, 56, 56), (2, 2)),  # 784 outputs a plane: groups of 5
        ((2, 3, 4, 8, 12), (1, 4, 4)),  # 3D: the depth slices stack too
        ((3, 4, 36), (3,)),  # 1D: one row a plane
    ],
)
def test_tiling_planes_merged_into_groups(shape, kernel):
    """Tiles that use every input row run over groups of consecutive planes
    seen as one tall plane (Plan.merged_tiling): the same values as torch,
    averages bit for bit, for float32/float64/float16 averages and maxima
    (NaN too) and int8 maxima, at 1 and 2 threads. A plane with a row left
    below its tiles is not merged."""
    pool = {
        1: (F.avg_pool1d, F.max_pool1d),
        2: (F.avg_pool2d, F.max_pool2d),
        3: (F.avg_pool3d, F.max_pool3d),
    }[len(kernel)]
    assert _tiling_plan(shape, kernel).merged
    x = _with_nans(RNG.standard_normal(shape).astype(np.float32), count=3)
    for n_threads in (1, 2):
        for dtype in (np.float32, np.float64, np.float16):
            xd = x.astype(dtype)
            finite = np.nan_to_num(xd)
            want_avg = pool[0](
                _t(finite.astype(np.float64 if dtype == np.float64 else np.float32)), kernel, kernel
            ).numpy()
            want_max = pool[1](
                _t(xd.astype(np.float64 if dtype == np.float64 else np.float32)), kernel, kernel
            ).numpy()
            np.testing.assert_array_equal(
                ovpool.avg_pool(finite, kernel, strides=kernel, num_threads=n_threads),
                want_avg.astype(dtype),
            )
            np.testing.assert_array_equal(
                ovpool.max_pool(xd, kernel, strides=kernel, num_threads=n_threads),
                want_max.astype(dtype),
            )
        x8 = RNG.integers(-128, 127, shape, endpoint=True).astype(np.int8)
        want8 = pool[1](_t(x8.astype(np.float32)), kernel, kernel).numpy().astype(np.int8)
        np.testing.assert_array_equal(
            ovpool.max_pool(x8, kernel, strides=kernel, num_threads=n_threads), want8
        )
    if len(kernel) >= 2 and kernel[-2] > 1:
        # one row more below the tiles of each plane: not merged, still right
        longer = shape[:-2] + (shape[-2] + 1, shape[-1])
        assert not _tiling_plan(longer, kernel).merged
        y = RNG.standard_normal(longer).astype(np.float32)
        np.testing.assert_array_equal(
            ovpool.avg_pool(y, kernel, strides=kernel), pool[0](_t(y), kernel, kernel).numpy()
        )


def test_tiling_adaptive_divisible_matches_torch():
    x = RNG.standard_normal((2, 6, 28, 28)).astype(np.float32)
    got = ovpool.adaptive_avg_pool(x, 7)
    want = F.adaptive_avg_pool2d(_t(x), 7).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=1e-7)  # torch divides by kh then kw
    values, indices = ovpool.adaptive_max_pool(x, 14)
    tv, ti = F.adaptive_max_pool2d(_t(x), 14, return_indices=True)
    np.testing.assert_array_equal(values, tv.numpy())
    np.testing.assert_array_equal(indices, ti.numpy())


@pytest.mark.parametrize(
    "shape, size",
    [
        ((2, 9, 7, 7), (6, 7)),  # bins of 2 at a step of 1
        ((2, 9, 50, 50), 7),  # bins of 8 at a step of 7
        ((2, 9, 15, 29), 7),  # 3 at 2 by 5 at 4
        ((2, 9, 57), 8),  # 1D: 8 at 7
        ((1, 9, 7, 22, 22), (6, 7, 7)),
        ((2, 9, 1, 6), (3, 4)),  # one row spread over three: a step of 0, not one window
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("blocked", [False, True])
def test_adaptive_bins_of_one_size_at_one_step_match_torch(shape, size, dtype, blocked):
    """Bins of one size at a step that does not divide the axis are taken as
    the fixed window they are (kernel = size, stride = step), on every path."""
    if blocked:
        _core.TUNING.pop("blocked_bytes", None)
        _core._cache.clear()
    x = np.round(RNG.standard_normal(shape) * 4).astype(dtype)  # ties
    x.reshape(-1)[5::97] = np.nan
    rank = len(shape) - 2
    avg = getattr(F, f"adaptive_avg_pool{rank}d")
    amax = getattr(F, f"adaptive_max_pool{rank}d")
    t = torch.from_numpy(x.astype(np.float64))
    tol = {np.float16: 1e-3, np.float32: 1e-6, np.float64: 1e-13}[dtype]
    np.testing.assert_allclose(
        ovpool.adaptive_avg_pool(x, size).astype(np.float64), avg(t, size).numpy(), rtol=tol
    )
    values, indices = ovpool.adaptive_max_pool(x, size)
    tv, ti = amax(t, size, return_indices=True)
    np.testing.assert_array_equal(values.astype(np.float64), tv.numpy())
    np.testing.assert_array_equal(indices, ti.numpy())


# -- pooling along D: one depth slice at a time ----------------------------------
# The kernels pool along D slice by slice for groups of output rows sized to
# 32 KiB of scratch: in_w = 700 makes groups of 11 rows, so an od's rows are
# split into several groups; a single plane makes the work units split an od
# across threads too.

SLICE_CASES = [
    # shape, kernel, strides, pads, dilations, ceil_mode
    ((2, 3, 9, 10, 11), (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1), (1, 1, 1), False),
    ((2, 3, 8, 9, 10), (2, 3, 2), (2, 1, 3), (0, 1, 0, 0, 1, 1), (1, 1, 1), True),
    ((1, 2, 11, 7, 9), (3, 2, 2), (1, 2, 2), (0, 0, 0, 0, 0, 0), (2, 1, 1), False),
    ((1, 1, 5, 40, 700), (2, 3, 3), (2, 1, 2), (1, 1, 1, 0, 1, 1), (1, 1, 1), True),
]


@pytest.mark.parametrize("shape, kernel, strides, pads, dilations, ceil", SLICE_CASES)
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_depth_pooling_average_against_onnx_reference(
    shape, kernel, strides, pads, dilations, ceil, count_include_pad, depth_path
):
    from references import onnx_pool_attrs, onnx_reference

    x = RNG.standard_normal(shape).astype(np.float32)
    attrs = onnx_pool_attrs(
        kernel,
        strides=strides,
        pads=pads,
        dilations=dilations,
        ceil_mode=ceil,
        count_include_pad=count_include_pad,
    )
    (want,) = onnx_reference("AveragePool", [x], attrs, opset=19)
    for n_threads in (1, 2):
        got = ovpool.avg_pool(
            x,
            kernel,
            strides=strides,
            pads=pads,
            dilations=dilations,
            ceil_mode=ceil,
            count_include_pad=count_include_pad,
            num_threads=n_threads,
        )
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    depth_path()


@pytest.fixture(params=["by_depth", "by_rows"])
def depth_path(request, monkeypatch):
    """Max values and average pooling along D take the depth maxima or sums
    of each output depth into a slab first (kernels._pool_by_depth) when a
    depth slice fits in _SLAB_BYTES; with no slab they pool slice by slice or
    row by row. Both paths run; the fixture returns a check that the calls
    took their path."""
    by_depth = request.param == "by_depth"
    monkeypatch.setitem(_core.TUNING, "slab_bytes", 256 * 1024 if by_depth else 0)
    _core._cache.clear()

    def took_path():
        slabs = [
            plan.kernel == "rows.depth_slab"
            for plan in _core.cached_plans()
            if plan.pools_depth and plan.family in (_core.AVERAGE, _core.MAX)
        ]
        assert slabs and all(slab == by_depth for slab in slabs)

    yield took_path
    _core._cache.clear()


@pytest.mark.parametrize("shape, kernel, strides, pads, dilations, ceil", SLICE_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8])
def test_depth_pooling_max_against_onnx_reference_and_torch(
    shape, kernel, strides, pads, dilations, ceil, dtype, depth_path
):
    from references import onnx_pool_attrs, onnx_reference

    if dtype == np.int8:
        x = RNG.integers(-128, 127, shape, endpoint=True).astype(dtype)
    else:
        x = RNG.standard_normal(shape).astype(dtype)
    attrs = onnx_pool_attrs(kernel, strides=strides, pads=pads, dilations=dilations, ceil_mode=ceil)
    (want,) = onnx_reference("MaxPool", [x], attrs, opset=12)
    for n_threads in (1, 2):
        got = ovpool.max_pool(
            x,
            kernel,
            strides=strides,
            pads=pads,
            dilations=dilations,
            ceil_mode=ceil,
            num_threads=n_threads,
        )
        np.testing.assert_array_equal(got, want)
    if dtype != np.int8 and tuple(pads[:3]) == tuple(pads[3:]):
        # NaN propagation, against torch (which pads symmetrically only)
        x = _with_nans(x)
        want = F.max_pool3d(
            _t(x), kernel, strides, tuple(pads[:3]), dilations, ceil_mode=ceil
        ).numpy()
        np.testing.assert_array_equal(
            ovpool.max_pool(
                x, kernel, strides=strides, pads=pads, dilations=dilations, ceil_mode=ceil
            ),
            want,
        )
    depth_path()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_depth_slab_nan_at_every_position(dtype, depth_path):
    """The slab pass combines the depth slices with plain maxps and one NaN
    check over the whole slab, and redoes a slab with a NaN by the exact rule.
    Plane i holds one NaN at flat position i (every slice, row, lane and tail
    column), beside +-inf and planes without NaN; against torch."""
    d, h, w = 5, 4, 11
    base = np.round(RNG.standard_normal((d, h, w)) * 2).astype(dtype)
    base[0, 0, 0], base[-1, -1, -1] = np.inf, -np.inf
    x = np.repeat(base[None, None], d * h * w + 1, axis=1)
    x.reshape(x.shape[1], -1)[np.arange(d * h * w), np.arange(d * h * w)] = np.nan
    for k, st, p in [
        ((3, 3, 3), (2, 2, 2), (1, 1, 1)),
        ((2, 2, 3), (1, 2, 1), (0, 1, 1)),
        ((5, 1, 1), (1, 1, 1), (0, 0, 0)),
    ]:
        got = ovpool.max_pool(x, k, strides=st, pads=p * 2)
        want = F.max_pool3d(_t(x), k, st, p).numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"kernel {k} strides {st}")
    depth_path()


@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_depth_slab_large_input_prefetch(dtype, depth_path, monkeypatch):
    """An input of 2M+ elements prefetches the window rows ahead (by rows),
    and, with the slab threshold (16 MiB of float32) lowered to 2M elements
    here, the next work unit's slab rows; maxima and means against torch at
    1 and 2 threads."""
    monkeypatch.setitem(_core.TUNING, "slab_prefetch_min_elements", 1 << 21)
    _core._cache.clear()
    shape = (2, 16, 12, 70, 90)  # 2.4M elements
    if dtype == np.uint8:
        x = RNG.integers(0, 255, shape, endpoint=True).astype(dtype)
    else:
        x = RNG.standard_normal(shape).astype(dtype)
    reference = _t(x.astype(np.float32))
    for k, st, p in [((3, 3, 3), (2, 2, 2), (1, 1, 1)), ((2, 2, 2), (2, 2, 2), (0, 0, 0))]:
        want = F.max_pool3d(reference, k, st, p).numpy().astype(dtype)
        want_mean = F.avg_pool3d(reference, k, st, p, count_include_pad=False).numpy()
        for n_threads in (1, 2):
            got = ovpool.max_pool(x, k, strides=st, pads=p * 2, num_threads=n_threads)
            np.testing.assert_array_equal(got, want, err_msg=f"kernel {k} threads {n_threads}")
            if dtype == np.float32:
                got = ovpool.avg_pool(x, k, strides=st, pads=p * 2, num_threads=n_threads)
                np.testing.assert_allclose(got, want_mean, rtol=1e-5, atol=1e-6)
    depth_path()
    assert all(
        plan.slab_prefetch for plan in _core.cached_plans() if plan.kernel == "rows.depth_slab"
    )
    _core._cache.clear()


def test_depth_pooling_adaptive_against_torch(depth_path):
    x = RNG.standard_normal((2, 3, 10, 13, 30)).astype(np.float32)
    for size in [(4, 7, 7), (3, 5, 9), (10, 1, 4), (1, 13, 30)]:
        np.testing.assert_allclose(
            ovpool.adaptive_avg_pool(x, size),
            F.adaptive_avg_pool3d(_t(x), size).numpy(),
            rtol=1e-6,
            atol=1e-7,
        )
        values, _ = ovpool.adaptive_max_pool(x, size)
        np.testing.assert_array_equal(values, F.adaptive_max_pool3d(_t(x), size).numpy())
    # Lp pooling sums |x|^p along D: never by the slab, whose sums are plain
    # (torch raises x, not |x|, to the power: it gets |x|)
    np.testing.assert_allclose(
        ovpool.lp_pool(x, (3, 2, 2), strides=(2, 1, 2), p=3),
        F.lp_pool3d(_t(np.abs(x)), 3, (3, 2, 2), (2, 1, 2)).numpy(),
        rtol=1e-5,
        atol=1e-6,
    )
    depth_path()


def _assert_rows_runs(plans, width, one_element=True):
    """Every plan of _three_wide_geometries takes the run-of-rows kernel,
    without prefetches, but on a width of 1: there the (1, 3) windows padded
    by 1 (W strides 1 and 2) hold one element each (pads not counted), which
    the 1x1 tiles take."""
    tiles = [plan for plan in plans if plan.kernel == "tiles"]
    assert len(tiles) == (2 if width == 1 and one_element else 0)
    assert all(
        plan.kernel == "rows.runs" and plan.prefetch == 0 for plan in plans if plan not in tiles
    )


def _three_wide_geometries(width):
    """(kh, sh, ph, pw, sw) of the run-of-rows kernels' tests: H windows of
    1-3 rows at strides 1-2 (edge windows of 1-2 rows), W padded or not, W
    strides 1 and 2; only those whose padded width holds a window."""
    for kh, sh, ph in [(3, 2, 1), (3, 1, 1), (2, 1, 1), (1, 1, 0), (3, 1, 0)]:
        for pw in (0, 1):
            for sw in (1, 2):
                if width + 2 * pw >= 3:
                    yield kh, sh, ph, pw, sw


# -- the run path: any float32 window uniform along W, runs of rows ---------

_RUN_GEOMETRIES = [
    # (kernel, strides, pads, dilations, ceil_mode)
    ((2, 2), (1, 1), (0, 0, 0, 0), (1, 1), False),  # one span per block, one long row
    ((4, 4), (3, 3), (0, 0, 0, 0), (1, 1), True),  # ceil: direct where it fits
    ((5, 3), (1, 2), (2, 0, 1, 0), (1, 1), False),  # H pads only: edge rows row by row
    ((2, 5), (2, 1), (0, 0, 0, 0), (2, 1), False),  # H stride 2: rows one by one
    ((3, 2), (1, 1), (1, 0, 0, 1), (2, 2), True),  # dilated both ways; W pads: rows
    ((7, 8), (1, 3), (0, 0, 0, 0), (1, 1), False),  # 8 taps: the span horizontal pass
]


def _run_inputs(h, w, nan):
    x = RNG.standard_normal((2, 3, h, w)).astype(np.float32)
    if nan:
        x[0, 1, h // 2, w // 3] = np.nan  # one window row with a NaN
        x[1, 2, h - 1, w - 1] = np.nan  # in the last block's last row
    return x


@pytest.mark.parametrize("h, w", [(7, 5), (40, 12), (9, 38), (23, 70)])
@pytest.mark.parametrize("family", ["max", "avg", "avg_cip", "lp1", "lp2", "lp3"])
def test_run_path(monkeypatch, h, w, family):
    """float32 windows uniform along W without pooling along D take the run
    path (runs of output rows per call, a block's vertical pass as one span
    where its windows step by one row, narrow rows' horizontal pass over the
    block as one row): the same bits as the row path (the same windows on a
    prefetched input, which keeps the row path), with blocks of 64 elements
    so that a plane takes several; NaN windows take the exact rule; against
    torch (max by value and NaN position, averages and Lp within rounding)."""
    monkeypatch.setitem(_core.TUNING, "run_elements", 64)
    compared_with_rows = []
    for nan in (False, True) if family == "max" else (False,):
        x = _run_inputs(h, w, nan)
        for kernel, strides, pads, dil, ceil in _RUN_GEOMETRIES:
            if family != "max" and dil != (1, 1):
                continue
            if (
                any(k > i + p0 + p1 for k, i, p0, p1 in zip(kernel, (h, w), pads[:2], pads[2:]))
                or kernel[1] > w
            ):
                continue
            kw = dict(strides=strides, pads=pads, ceil_mode=ceil)
            if family == "max":
                call = functools.partial(ovpool.max_pool, kernel_shape=kernel, dilations=dil, **kw)
            elif family.startswith("avg"):
                call = functools.partial(
                    ovpool.avg_pool,
                    kernel_shape=kernel,
                    count_include_pad=int(family == "avg_cip"),
                    **kw,
                )
            else:
                call = functools.partial(
                    ovpool.lp_pool, kernel_shape=kernel, p=int(family[2]), **kw
                )
            _core._cache.clear()
            got = call(x)
            # windows padded along W keep the row path (the copy into the
            # padded buffer cost more than the run saves)
            reach = (got.shape[-1] - 1) * strides[1] + (kernel[1] - 1) * dil[1] + 1
            direct = pads[1] == 0 and reach <= w
            assert [plan.kernel for plan in _core.cached_plans()] == [
                "rows.runs" if direct else "rows.separable"
            ]
            np.testing.assert_array_equal(call(x, num_threads=2), got)
            message = f"{family} {kernel} {strides} {pads} {dil} ceil={ceil} nan={nan}"
            # the row path: the same windows with the input's rows prefetched
            with monkeypatch.context() as m:
                m.setitem(_core.TUNING, "prefetch_min_elements", 0)
                m.setitem(_core.TUNING, "prefetch_min_plane", 0)
                _core._cache.clear()
                rows = call(x)
                # overlapping windows
                if [plan.kernel for plan in _core.cached_plans()] == ["rows.separable"]:
                    np.testing.assert_array_equal(got, rows, err_msg=message)
                    compared_with_rows.append(message)
            # torch, where its padding and ceil rules are ONNX's
            if ceil or pads[:2] != pads[2:] or family in ("avg", "lp3"):
                continue
            t = _t(x)
            if family == "max":
                want = F.max_pool2d(t, kernel, strides, pads[:2], dil).numpy()
                np.testing.assert_array_equal(got, want, err_msg=message)
            elif family == "avg_cip":
                want = F.avg_pool2d(t, kernel, strides, pads[:2]).numpy()
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=message)
            elif pads == (0, 0, 0, 0):
                p = int(family[2])
                want = F.lp_pool2d(t.abs() if p == 1 else t, p, kernel, strides).numpy()
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=message)
    assert len(compared_with_rows) >= 2


# -- 3-wide averages at W stride 1 or 2: a slice of rows per call ------------


@pytest.mark.parametrize("width", [1, 2, 3, 7, 8, 9, 16, 35])
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_average_3_wide_rows(width, count_include_pad):
    """float32 averages 3 taps wide at W stride 1 or 2 whose H windows have
    at most 3 rows (Inception's 3x3 s1 p1, 3x3 s2) run a depth slice's rows in
    one call (ovpool_sum_rows_k3_f32): H windows of 1-3 rows at strides 1-2,
    edge windows of 1-2 rows, padded and unpadded W, vector blocks and
    scalar tails, 2D and 3D without depth pooling; against torch and the
    ONNX reference (asymmetric pads, ceil mode)."""
    from references import onnx_pool_attrs, onnx_reference

    x = RNG.standard_normal((2, 3, 9, width)).astype(np.float32)
    _core._cache.clear()
    for kh, sh, ph, pw, sw in _three_wide_geometries(width):
        got = ovpool.avg_pool(
            x, (kh, 3), strides=(sh, sw), pads=(ph, pw, ph, pw), count_include_pad=count_include_pad
        )
        want = F.avg_pool2d(
            _t(x), (kh, 3), (sh, sw), (ph, pw), count_include_pad=bool(count_include_pad)
        ).numpy()
        np.testing.assert_allclose(
            got,
            want,
            rtol=1e-6,
            atol=1e-7,
            err_msg=f"kernel ({kh}, 3) strides {sh} {sw} pads {ph} {pw}",
        )
    _assert_rows_runs(_core.cached_plans(), width, one_element=not count_include_pad)
    if width >= 2:
        for sw in (1, 2):
            attrs = onnx_pool_attrs(
                (2, 3),
                strides=(2, sw),
                pads=(0, 1, 1, 0),
                ceil_mode=True,
                count_include_pad=count_include_pad,
            )
            (want,) = onnx_reference("AveragePool", [x], attrs, opset=19)
            got = ovpool.avg_pool(
                x,
                (2, 3),
                strides=(2, sw),
                pads=(0, 1, 1, 0),
                ceil_mode=True,
                count_include_pad=count_include_pad,
            )
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    x3 = RNG.standard_normal((1, 2, 4, 6, width)).astype(np.float32)
    got = ovpool.avg_pool(
        x3,
        (1, 3, 3),
        strides=(2, 1, 1),
        pads=(0, 1, 1) * 2,
        count_include_pad=count_include_pad,
        num_threads=2,
    )
    attrs = onnx_pool_attrs(
        (1, 3, 3), strides=(2, 1, 1), pads=(0, 1, 1) * 2, count_include_pad=count_include_pad
    )
    (want,) = onnx_reference("AveragePool", [x3], attrs, opset=19)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def _l2_rows_reference(x, kh, sh, ph, pw, sw):
    """LpPool p=2 of 3-wide windows in float32, in the kernel's order: the
    squares of the window rows added top to bottom, the three columns left
    to right, then the square root (zero padding adds exact zeros)."""
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw))).astype(np.float32)
    squares = xp * xp
    out_h = (xp.shape[2] - kh) // sh + 1
    out_w = (xp.shape[3] - 3) // sw + 1
    out = np.empty(x.shape[:2] + (out_h, out_w), np.float32)
    for oh in range(out_h):
        col = squares[:, :, oh * sh]
        for t in range(1, kh):
            col = col + squares[:, :, oh * sh + t]
        for ow in range(out_w):
            c = ow * sw
            out[:, :, oh, ow] = np.sqrt((col[:, :, c] + col[:, :, c + 1]) + col[:, :, c + 2])
    return out


@pytest.mark.parametrize("width", [1, 2, 3, 7, 8, 9, 16, 17, 33])
def test_l2_norm_3_wide_rows(width):
    """LpPool p=2 of windows 3 wide at W stride 1 or 2 with H windows of at
    most 3 rows (float32, no depth pooling) takes the run-of-rows kernel with
    the averages (ovpool_sum_rows_k3_f32, squaring the rows): bit for bit
    against numpy in the kernel's order of operations, and against torch's
    lp_pool2d and ONNX Runtime (ceil mode, asymmetric pads) by value. (Not
    onnx.reference here: on a ceil-mode window cut by the input's end it
    scales the sum by kernel size / taps inside, as an average would; ONNX
    Runtime and the spec's zero padding do not.)"""
    from references import onnx_pool_attrs, onnxruntime_run

    x = RNG.standard_normal((2, 3, 9, width)).astype(np.float32)
    _core._cache.clear()
    for kh, sh, ph, pw, sw in _three_wide_geometries(width):
        got = ovpool.lp_pool(x, (kh, 3), p=2, strides=(sh, sw), pads=(ph, pw, ph, pw))
        message = f"kernel ({kh}, 3) strides {sh} {sw} pads {ph} {pw}"
        np.testing.assert_array_equal(
            got, _l2_rows_reference(x, kh, sh, ph, pw, sw), err_msg=message
        )
        if ph == pw == 0:
            want = F.lp_pool2d(_t(x), 2, (kh, 3), (sh, sw)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=message)
    _assert_rows_runs(_core.cached_plans(), width)
    if width >= 2:
        for sw in (1, 2):
            attrs = onnx_pool_attrs((2, 3), strides=(2, sw), pads=(0, 1, 1, 0), ceil_mode=True, p=2)
            (want,) = onnxruntime_run("LpPool", [x], attrs, opset=18)
            got = ovpool.lp_pool(
                x, (2, 3), p=2, strides=(2, sw), pads=(0, 1, 1, 0), ceil_mode=True, num_threads=2
            )
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # the other p keep the row path, against the float64 row path's values
    got = ovpool.lp_pool(x, (3, 3), p=3, strides=(2, 2), pads=(1, 1, 1, 1))
    want = ovpool.lp_pool(x.astype(np.float64), (3, 3), p=3, strides=(2, 2), pads=(1, 1, 1, 1))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _average_rows_reference(x, kh, sh, ph, count_include_pad):
    """AveragePool of (kh, 3) windows at W stride 2 without W padding, in
    float32 in the kernel's order: the window rows inside the input added
    top to bottom, the three columns left to right, then divided by the
    float32 product (rows counted) * 3."""
    in_h = x.shape[2]
    out_h = (in_h + 2 * ph - kh) // sh + 1
    out_w = (x.shape[3] - 3) // 2 + 1
    out = np.empty(x.shape[:2] + (out_h, out_w), np.float32)
    for oh in range(out_h):
        rows = [r for r in range(oh * sh - ph, oh * sh - ph + kh) if 0 <= r < in_h]
        col = x[:, :, rows[0]]
        for r in rows[1:]:
            col = col + x[:, :, r]
        count = np.float32(kh if count_include_pad else len(rows)) * np.float32(3)
        for ow in range(out_w):
            c = 2 * ow
            out[:, :, oh, ow] = ((col[:, :, c] + col[:, :, c + 1]) + col[:, :, c + 2]) / count
    return out


@pytest.mark.parametrize("width", [17, 18, 19, 20, 33, 35, 57])
def test_3_wide_stride_2_rows_in_registers(width):
    """Averages and L2 norms of 3-wide windows at W stride 2 with no padding
    along W and 8+ outputs a row take their column sums in registers
    (ovpool_sum_row_s2k3): rows of exactly 2 out_w + 1 columns and longer,
    one whole block, two, and an overlapping last block; H windows of 1-3
    rows (H padding, both count_include_pad). Bit for bit against numpy in
    the kernel's order, and against torch by value, at 1 and 2 threads."""
    x = RNG.standard_normal((2, 3, 11, width)).astype(np.float32)
    for kh, sh, ph in [(3, 2, 0), (3, 2, 1), (3, 1, 1), (2, 2, 1), (1, 1, 0)]:
        message = f"kernel ({kh}, 3) stride ({sh}, 2) pad {ph}"
        for n_threads in (1, 2):
            got = ovpool.lp_pool(
                x, (kh, 3), p=2, strides=(sh, 2), pads=(ph, 0, ph, 0), num_threads=n_threads
            )
            np.testing.assert_array_equal(
                got, _l2_rows_reference(x, kh, sh, ph, 0, 2), err_msg=message
            )
            for cip in (0, 1):
                got = ovpool.avg_pool(
                    x,
                    (kh, 3),
                    strides=(sh, 2),
                    pads=(ph, 0, ph, 0),
                    count_include_pad=cip,
                    num_threads=n_threads,
                )
                np.testing.assert_array_equal(
                    got, _average_rows_reference(x, kh, sh, ph, cip), err_msg=message
                )
                want = F.avg_pool2d(
                    _t(x), (kh, 3), (sh, 2), (ph, 0), count_include_pad=bool(cip)
                ).numpy()
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=message)
        if ph == 0:
            want = F.lp_pool2d(_t(x), 2, (kh, 3), (sh, 2)).numpy()
            np.testing.assert_allclose(
                ovpool.lp_pool(x, (kh, 3), p=2, strides=(sh, 2)),
                want,
                rtol=1e-5,
                atol=1e-6,
                err_msg=message,
            )
    # ceil mode on an even width: the last window is cut by the row's end,
    # which the register path must not read past (it keeps the buffer)
    got = ovpool.avg_pool(x, (3, 3), strides=(2, 2), ceil_mode=True)
    want = F.avg_pool2d(_t(x), (3, 3), (2, 2), ceil_mode=True).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("width", [1, 2, 3, 7, 8, 9, 16, 17, 33])
@pytest.mark.parametrize("nans", [False, True])
def test_max_3_wide_rows(width, nans):
    """float32 maxima 3 taps wide at W stride 1 or 2 whose H windows have at
    most 3 rows (the ResNet stem's 3x3 s2 p1, 3x3 s1) run a depth slice's rows
    in one call (ovpool_max_rows_k3_f32): H windows of 1-3 rows at strides
    1-2, edge windows of 1-2 rows, padded and unpadded W, vector blocks and
    scalar tails, rows with and without NaN; the values equal torch's and the
    float64 row path's, and the ONNX reference's in ceil mode."""
    from references import onnx_pool_attrs, onnx_reference

    x = RNG.standard_normal((2, 3, 9, width)).astype(np.float32)
    x[0, 1, 4, width // 2] = np.inf
    x[1, 0, 2, width - 1] = -np.inf
    if nans:
        x = _with_nans(x, count=4)
    _core._cache.clear()
    for kh, sh, ph, pw, sw in _three_wide_geometries(width):
        args = dict(strides=(sh, sw), pads=(ph, pw, ph, pw))
        got = ovpool.max_pool(x, (kh, 3), **args)
        want = F.max_pool2d(_t(x), (kh, 3), (sh, sw), (ph, pw)).numpy()
        message = f"kernel ({kh}, 3) strides {sh} {sw} pads {ph} {pw}"
        np.testing.assert_array_equal(got, want, err_msg=message)
        by_rows = ovpool.max_pool(x.astype(np.float64), (kh, 3), **args)
        np.testing.assert_array_equal(got, by_rows, err_msg=message)
        assert got.dtype == np.float32
    _assert_rows_runs([plan for plan in _core.cached_plans() if plan.dtype == "float32"], width)
    if width >= 2:
        finite = np.nan_to_num(x, nan=0.5)  # the reference's NaN rule is not PyTorch's
        for sw in (1, 2):
            attrs = onnx_pool_attrs((2, 3), strides=(2, sw), pads=(0, 1, 1, 0), ceil_mode=True)
            (want,) = onnx_reference("MaxPool", [finite], attrs, opset=22)
            got = ovpool.max_pool(
                finite, (2, 3), strides=(2, sw), pads=(0, 1, 1, 0), ceil_mode=True, num_threads=2
            )
            np.testing.assert_array_equal(got, want)
    x3 = RNG.standard_normal((1, 2, 4, 6, width)).astype(np.float32)
    got = ovpool.max_pool(x3, (1, 3, 3), strides=(2, 1, 2), pads=(0, 1, 1) * 2, num_threads=2)
    want = F.max_pool3d(_t(x3), (1, 3, 3), (2, 1, 2), (0, 1, 1)).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("width", [2, 3, 7, 8, 9, 16, 17, 35])
@pytest.mark.parametrize("nans", [False, True])
def test_max_2_wide_rows(width, nans):
    """float32 maxima 2 taps wide at W stride 1 whose H windows have at most
    3 rows take the 3-wide kernel's runs too (ovpool_max_rows_k3_f32 with
    k = 2): H windows of 1-3 rows at strides 1-2, W unpadded and padded at
    the end (TensorFlow's SAME), vector blocks and scalar tails, rows with
    NaN, infinities and ties of +0 and -0; the values equal torch's, the
    bits (the sign of a zero maximum) those of the float64 row path, which
    combines in the same order."""
    from references import onnx_pool_attrs, onnx_reference

    x = RNG.standard_normal((2, 3, 9, width)).astype(np.float32)
    x[0, 1, 4, width // 2] = np.inf
    x[1, 0, 2, width - 1] = -np.inf
    x[1, 2, 3:6, :] = np.where(RNG.random((3, width)) < 0.5, np.float32(0.0), np.float32(-0.0))
    x[1, 2, 3:6, :: max(1, width // 3)] = -1.0
    if nans:
        x = _with_nans(x, count=4)
    _core._cache.clear()
    for kh, sh, ph in [(2, 1, 0), (2, 1, 1), (3, 1, 1), (3, 2, 1), (1, 1, 0), (2, 2, 0)]:
        for pw_end in (0, 1):
            args = dict(strides=(sh, 1), pads=(ph, 0, ph, pw_end))
            got = ovpool.max_pool(x, (kh, 2), **args)
            message = f"kernel ({kh}, 2) strides {sh} 1 pads {ph} {pw_end}"
            padded = F.pad(_t(x), (0, pw_end, 0, 0), value=-np.inf)
            want = F.max_pool2d(padded, (kh, 2), (sh, 1), (ph, 0)).numpy()
            np.testing.assert_array_equal(got, want, err_msg=message)
            by_rows = ovpool.max_pool(x.astype(np.float64), (kh, 2), **args)
            np.testing.assert_array_equal(got, by_rows, err_msg=message)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(by_rows), err_msg=message)
    # every float32 plan so far takes the run-of-rows kernel, by its kernel of
    # narrow windows
    assert all(
        plan.kernel == "rows.runs"
        and plan.prefetch == 0
        and "2-3-wide windows by their own kernel" in plan.explain()
        for plan in _core.cached_plans()
        if plan.dtype == "float32"
    )
    finite = np.nan_to_num(x, nan=0.5)  # the reference's NaN rule is not PyTorch's
    attrs = onnx_pool_attrs((2, 2), strides=(2, 1), pads=(0, 0, 1, 1), ceil_mode=True)
    (want,) = onnx_reference("MaxPool", [finite], attrs, opset=22)
    got = ovpool.max_pool(finite, (2, 2), strides=(2, 1), pads=(0, 0, 1, 1), ceil_mode=True)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "op, kernel, pads",
    [("max", (3, 3), (1, 1, 1, 1)), ("max", (2, 2), (0, 0, 0, 0)), ("avg", (3, 3), (0, 1, 0, 1))],
)
def test_narrow_stride_1_windows_on_prefetched_planes(op, kernel, pads, monkeypatch):
    """Inputs large enough for the row path's prefetch (2^21+ elements,
    planes of 8K+): 2-3-wide windows at stride 1 still take the narrow run
    kernel, which does not prefetch. With NaN and infinities: maxima equal
    torch's, averages torch's to rounding, and both the bits of the
    prefetched row path (the run path turned off), which combines in the same
    order; 3-wide windows at stride 2 keep the prefetched row path."""
    x = RNG.standard_normal((2, 64, 128, 128)).astype(np.float32)
    x[0, 3, 7, 9] = np.inf
    x[1, 60, 100, 127] = -np.inf
    x = _with_nans(x, count=9)
    pool = ovpool.max_pool if op == "max" else ovpool.avg_pool
    kwargs = {} if op == "max" else {"count_include_pad": True}
    _core._cache.clear()
    got = pool(x, kernel, pads=pads, **kwargs)
    (plan,) = _core.cached_plans()
    assert plan.kernel == "rows.runs" and plan.prefetch == 0, plan
    assert "2-3-wide windows by their own kernel" in plan.explain()
    padding = (pads[1], pads[3], pads[0], pads[2])
    if op == "max":
        want = F.max_pool2d(F.pad(_t(x), padding, value=-np.inf), kernel, 1).numpy()
        np.testing.assert_array_equal(got, want)
    else:
        want = F.avg_pool2d(F.pad(_t(x), padding, value=0.0), kernel, 1).numpy()
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    with monkeypatch.context() as m:
        m.setitem(_core.TUNING, "run_elements", 0)
        _core._cache.clear()
        by_rows = pool(x, kernel, pads=pads, **kwargs)
        (plan,) = _core.cached_plans()
        assert plan.kernel == "rows.separable" and plan.prefetch > 0, plan
    np.testing.assert_array_equal(got, by_rows)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(by_rows))
    if kernel == (3, 3):
        _core._cache.clear()
        pool(x, kernel, strides=(2, 2), pads=pads, **kwargs)
        (plan,) = _core.cached_plans()
        assert plan.kernel == "rows.separable" and plan.prefetch > 0, plan
    _core._cache.clear()


def test_max_3_wide_rows_hand_computed():
    """The stem's 3x3 s2 p1 on a 4x5 plane, by hand: padding never wins, the
    NaN window rows and columns give NaN."""
    x = np.arange(20, dtype=np.float32).reshape(1, 1, 4, 5) * np.float32(-1)
    got = ovpool.max_pool(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1))
    np.testing.assert_array_equal(got[0, 0], [[0, -1, -3], [-5, -6, -8]])
    x[0, 0, 2, 4] = np.nan
    got = ovpool.max_pool(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1))
    np.testing.assert_array_equal(got[0, 0], [[0, -1, -3], [-5, -6, np.nan]])


# -- long window rows and global reductions ------------------------------------


@pytest.mark.parametrize("n", [1, 7, 8, 9, 15, 16, 17, 49, 100, 1000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_global_max_and_mean_against_numpy(n, dtype):
    x = RNG.standard_normal((3, 4, n)).astype(dtype)
    np.testing.assert_array_equal(ovpool.global_max_pool(x)[..., 0], x.max(axis=2))
    np.testing.assert_allclose(
        ovpool.global_avg_pool(x)[..., 0],
        x.mean(axis=2),
        rtol=1e-6 if dtype == np.float32 else 1e-14,
        atol=1e-7 if dtype == np.float32 else 1e-15,
    )
    if n > 1:
        x[1, 2, n // 2] = np.nan
        got = ovpool.global_max_pool(x)[..., 0]
        assert np.isnan(got[1, 2]) and not np.isnan(np.delete(got.reshape(-1), 6)).any()


def _sum16(v):
    """A plane's sum in the order docs/reference/semantics.md gives global
    sums, in float32: 16 lanes, lane j taking elements j, j + 16, ... in
    order, folded pairwise (j + 8 -> j, j + 4 -> j, j + 2 -> j, 1 -> 0), then
    the last n % 16 elements in order."""
    full = len(v) - len(v) % 16
    lanes = np.zeros(16, np.float32)
    for i in range(0, full, 16):
        lanes = lanes + v[i : i + 16]
    lanes = lanes[:8] + lanes[8:]
    lanes = lanes[:4] + lanes[4:]
    lanes = lanes[:2] + lanes[2:]
    tail = np.float32(0)
    for t in v[full:]:
        tail = np.float32(tail + t)
    return np.float32(np.float32(lanes[0] + lanes[1]) + tail)


@pytest.mark.parametrize("n", [1, 15, 16, 17, 33, 100, 1089])
def test_global_sums_in_the_documented_order(n):
    """Global averages and float32 global Lp of p 1 and 2, bit for bit
    against the documented order computed in numpy (192 planes: units of 4+
    planes at 1 and 2 threads, so planes of 1024+ take the interleaved sums)."""
    x = RNG.standard_normal((4, 48, n)).astype(np.float32)
    want = np.empty((3, 4, 48), np.float32)
    for b, c in np.ndindex(4, 48):
        v = x[b, c]
        want[:, b, c] = (
            _sum16(v) / np.float32(n),
            _sum16(np.abs(v)),
            np.sqrt(np.float64(_sum16(v * v))),
        )
    for threads in (1, 2):
        got = [
            ovpool.global_avg_pool(x, num_threads=threads)[..., 0],
            ovpool.global_lp_pool(x, p=1, num_threads=threads)[..., 0],
            ovpool.global_lp_pool(x, p=2, num_threads=threads)[..., 0],
        ]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.view(np.uint32), w.view(np.uint32))


@pytest.mark.parametrize("threads", [1, 2])
def test_global_means_of_planes_of_64_and_more(threads):
    """float32 planes of 64 to 127 values are summed eight at a time, longer
    ones four at a time, a quarter of the unit's planes apart, with their
    additions interleaved: each plane's sum in the documented order (_sum16,
    computed in numpy) at lengths around the blocks of 16 and the bounds of
    the paths, in units of 64 planes and of planes not a multiple of four (a
    unit's last planes one by one), with NaN and inf, and numpy's float64
    mean within float32 rounding."""
    cases = [(64, 2060), (100, 2060), (127, 2060), (128, 2060), (196, 2060), (300, 2060)]
    cases += [(1024, 864), (1025, 864), (1039, 96), (1040, 96), (1089, 96), (4099, 864)]
    for n, planes in cases:
        x = RNG.standard_normal((planes // 4, 4, n)).astype(np.float32)
        x[1, 3, 7] = np.nan
        x[2, 1, n - 1] = np.inf
        x[-1, 2, :] = 2.0**100  # every partial sum exact, so the mean is too
        got = ovpool.global_avg_pool(x, num_threads=threads)[..., 0]
        want = np.array([[_sum16(p) / np.float32(n) for p in q] for q in x])
        np.testing.assert_array_equal(got, want.astype(np.float32), err_msg=f"n={n}")
        assert np.isnan(got[1, 3]) and got[2, 1] == np.inf and got[-1, 2] == 2.0**100
        np.testing.assert_allclose(
            got[0], x[0].astype(np.float64).mean(axis=1), rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_global_max_of_long_planes(dtype):
    """Planes of 64+ values are reduced with four running maxima: the same
    values as numpy's at every length around the blocks of 32 and 8, a NaN
    anywhere gives NaN, -inf planes give -inf; and where a +0 and a -0 tie
    for the maximum the later zero of the plane is kept, as one chain keeps
    it (hand-made planes whose last eight values are the later zeros: four
    running maxima alone would keep the zeros of values 56-63)."""
    for n in [64, 65, 71, 72, 95, 96, 97, 127, 128, 200, 1000, 4099]:
        x = RNG.standard_normal((2, 3, n)).astype(dtype)
        x[1, 0] = -np.inf
        x[1, 1, RNG.integers(0, n)] = np.nan
        x[1, 2, n - 1] = np.nan
        got = ovpool.global_max_pool(x)[..., 0]
        np.testing.assert_array_equal(got[0], x[0].max(axis=1), err_msg=f"n={n}")
        assert got[1, 0] == -np.inf and np.isnan(got[1, 1]) and np.isnan(got[1, 2]), n
    for later in (0.0, -0.0):
        x = np.full((1, 2, 72), -1.0, dtype)
        x[..., 56:64] = -later
        x[..., 64:72] = later
        got = ovpool.global_max_pool(x).reshape(-1)
        assert (got == 0).all() and (np.signbit(got) == np.signbit(later)).all(), (later, got)


@pytest.mark.parametrize("shape", [(4, 700, 7, 7), (1, 3, 5, 5), (2, 1, 300, 300), (3, 37, 16)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_global_mean_in_groups_of_planes(shape, dtype):
    """Global averages sum a group of up to 64 planes, then divide the group
    (fewer planes a group when there are few): full and partial groups, a
    plane a group, 1 and 2 threads, against numpy and torch; every plane
    divided once, the same bits at any thread count."""
    x = RNG.standard_normal(shape).astype(dtype)
    want = x.astype(np.float64).mean(axis=tuple(range(2, x.ndim)), keepdims=True)
    got = {}
    for n_threads in (1, 2):
        got[n_threads] = ovpool.global_avg_pool(x, num_threads=n_threads)
        np.testing.assert_allclose(
            got[n_threads], want, rtol=1e-5 if dtype == np.float32 else 1e-13, atol=1e-7
        )
    np.testing.assert_array_equal(got[1], got[2])
    if x.ndim == 4:
        np.testing.assert_allclose(
            got[1],
            F.adaptive_avg_pool2d(_t(x), 1).numpy(),
            rtol=1e-5 if dtype == np.float32 else 1e-13,
            atol=1e-7,
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_span_max_nan_at_every_position(dtype):
    """The span maximum (global max, windows of 8+ taps) ends with a vector
    block that overlaps the one before it instead of a scalar tail: plane i
    of each size holds one NaN at position i, so the NaN falls in every block,
    the overlap and the lanes before it; against numpy."""
    for n in range(2, 42):
        x = RNG.standard_normal((1, n + 1, n)).astype(dtype)
        x[0, np.arange(n), np.arange(n)] = np.nan
        np.testing.assert_array_equal(
            ovpool.global_max_pool(x)[..., 0], x.max(axis=2), err_msg=f"plane size {n}"
        )


@pytest.mark.parametrize("k", [8, 9, 12, 17])
def test_long_window_rows_against_torch(k):
    x = _with_nans(RNG.standard_normal((2, 3, 2 * k + 5)).astype(np.float32), 2)
    got, gi = ovpool.max_pool(x, (k,), strides=(3,), return_indices=True)
    tv, ti = F.max_pool1d(_t(x), k, 3, return_indices=True)
    np.testing.assert_array_equal(got, tv.numpy())
    np.testing.assert_array_equal(gi % x.shape[2], ti.numpy())
    y = RNG.standard_normal((2, 3, 5 * k + 1)).astype(np.float32)
    np.testing.assert_allclose(
        ovpool.avg_pool(y, (k,), strides=(k,)),
        F.avg_pool1d(_t(y), k, k).numpy(),
        rtol=1e-6,
        atol=1e-7,
    )


@pytest.mark.parametrize("stride", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("dilation", [1, 2])
def test_strided_windows_along_w_against_torch(stride, dilation):
    """Windows under 8 taps at W strides of 3 and more: eight outputs a
    register from plain loads (strides 3, 4, 5, 7; a gather at 6 and for the
    last blocks, whose loads would pass the row's last tap), from the input
    row in place where the row is padded at its ends (the edge outputs tap by
    tap) and from column maxima and sums (two window rows). Max values (NaN,
    -inf) and averages against PyTorch."""
    for k in range(1, 8):
        reach = (k - 1) * dilation + 1
        for pad in sorted({0, k // 2}):  # PyTorch pads at most half the kernel
            for ceil in (False, True):
                width = int(RNG.integers(reach + 8 * stride, reach + 40 * stride))
                x = RNG.standard_normal((2, 3, width)).astype(np.float32)
                x.reshape(-1)[RNG.choice(x.size, 6, replace=False)] = -np.inf
                xn = _with_nans(x, 3)
                kw = dict(strides=(stride,), pads=(pad, pad), dilations=(dilation,), ceil_mode=ceil)
                args = (k, stride, pad, dilation, ceil)
                want = F.max_pool1d(_t(xn), k, stride, pad, dilation, ceil_mode=ceil).numpy()
                np.testing.assert_array_equal(
                    ovpool.max_pool(xn, (k,), **kw), want, err_msg=str(args)
                )
                x2 = np.stack([xn, x], axis=2)  # (2, 3, 2, width): two window rows
                kw2 = dict(
                    strides=(1, stride),
                    pads=(0, pad, 0, pad),
                    dilations=(1, dilation),
                    ceil_mode=ceil,
                )
                want2 = F.max_pool2d(
                    _t(x2), (2, k), (1, stride), (0, pad), (1, dilation), ceil_mode=ceil
                ).numpy()
                np.testing.assert_array_equal(ovpool.max_pool(x2, (2, k), **kw2), want2)
                if dilation == 1:
                    y = np.where(np.isfinite(x), x, 0).astype(np.float32)
                    want = F.avg_pool1d(_t(y), k, stride, pad, ceil_mode=ceil).numpy()
                    np.testing.assert_allclose(
                        ovpool.avg_pool(y, (k,), count_include_pad=True, **kw),
                        want,
                        rtol=1e-6,
                        atol=1e-6,
                        err_msg=str(args),
                    )


def _span_sums_reference(x, k, stride):
    """Average of windows of k >= 8 taps along the last axis, in float32 in
    the kernels' order (_span_sum): eight lanes, each 0 + x[j] + x[j+8] + ...
    over the whole blocks of 8; the tail from 0, left to right; lanes folded
    j + (j + 4), then (0 + 2) + (1 + 3); plus the tail; divided by k."""
    with np.errstate(invalid="ignore", over="ignore"):
        return _span_sums_in_order(x.astype(np.float32), k, stride)


def _span_sums_in_order(x, k, stride):
    n_out = (x.shape[-1] - k) // stride + 1
    full = k // 8 * 8
    zero = np.float32(0)
    out = np.empty(x.shape[:-1] + (n_out,), np.float32)
    for o in range(n_out):
        w = x[..., o * stride : o * stride + k]
        lanes = [zero + w[..., j] for j in range(8)]
        for i in range(8, full, 8):
            lanes = [lanes[j] + w[..., i + j] for j in range(8)]
        tail = np.zeros(x.shape[:-1], np.float32)
        for i in range(full, k):
            tail = tail + w[..., i]
        c = [lanes[j] + lanes[j + 4] for j in range(4)]
        out[..., o] = (((c[0] + c[2]) + (c[1] + c[3])) + tail) / np.float32(k)
    return out


def _long_window_specials(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1, shape[-1])
    flat[0, :] = -0.0  # windows of -0 alone: +0
    flat[1, RNG.choice(shape[-1], 3, replace=False)] = [np.nan, np.inf, -np.inf]
    flat[2, RNG.choice(shape[-1], 2, replace=False)] = [np.inf, -np.inf]
    flat[3, :] = RNG.integers(-2, 3, shape[-1]) * 2.0**100  # cancellations
    return x


@pytest.mark.parametrize("k", [8, 9, 10, 11, 12, 13, 15, 16, 17, 20, 24, 33])
@pytest.mark.parametrize("stride_of", ["3", "5", "k"])
def test_long_window_sums_eight_at_a_time(k, stride_of):
    """Averages of 8+ taps along W at strides of 3 and more (strides 1 and 2
    have running-sum kernels of their own), eight windows at a time with the
    fold across them (ovpool_span_sums8_f32, the last block overlapping): every
    tail length 0-7 and one to four whole blocks of 8, rows of 8 to 31
    outputs, from the input row itself (1D, and 2D with one window row) and
    from column sums (2D, two window rows). Bit for bit against numpy in the
    kernels' order (a window of -0 alone gives +0, NaN and infinities
    propagate), by value against torch."""
    stride = {"3": 3, "5": 5, "k": k}[stride_of]
    for n_out in (8, 13, 31):
        width = (n_out - 1) * stride + k + int(RNG.integers(0, stride))
        x = _long_window_specials((2, 3, width))
        got = ovpool.avg_pool(x, (k,), strides=(stride,))
        want = _span_sums_reference(x, k, stride)
        assert got.shape == want.shape == (2, 3, n_out)
        np.testing.assert_array_equal(got, want)
        assert not np.signbit(got[0, 0]).any(), "a window of -0 sums to +0"
        finite = np.isfinite(x).all(axis=-1)
        np.testing.assert_allclose(
            got[finite], F.avg_pool1d(_t(x), k, stride).numpy()[finite], rtol=2e-6, atol=1e-6
        )
        x2 = x.reshape(2, 3, 1, width)
        np.testing.assert_array_equal(
            ovpool.avg_pool(x2, (1, k), strides=(1, stride)), want.reshape(2, 3, 1, n_out)
        )
        rows = np.concatenate([x2, x2 * np.float32(0.5)], axis=2)  # column sums 1.5 x
        np.testing.assert_array_equal(
            ovpool.avg_pool(rows, (2, k), strides=(1, stride)),
            (
                _span_sums_reference(rows[:, :, 0] + rows[:, :, 1], k, stride) / np.float32(2)
            ).reshape(2, 3, 1, n_out),
        )


def test_adaptive_1000_to_100_against_torch():
    """The issue's aap1d shape, scaled down in batch: 1000 -> 100 bins of 10
    taps (a tiling), eight bins at a time from the input rows."""
    x = RNG.standard_normal((2, 16, 1000)).astype(np.float32)
    got = ovpool.adaptive_avg_pool(x, 100)
    np.testing.assert_array_equal(got, _span_sums_reference(x, 10, 10))
    np.testing.assert_allclose(got, F.adaptive_avg_pool1d(_t(x), 100).numpy(), rtol=1e-6, atol=1e-7)
    for n in (1, 2):
        np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, 100, num_threads=n), got)


def _bins(n_in, n_out):
    return [(i * n_in // n_out, -(-(i + 1) * n_in // n_out)) for i in range(n_out)]


def _adaptive_lanes_reference(x, out_dhw):
    """Adaptive average over the last three axes (D, H, W), in float32 in the
    order of the wide-window kernel (ovpool_adaptive_rows_f32): each window
    sums into eight lanes, lane j adding taps j, j + 8, ... of every window
    row, slice by slice and top to bottom, from +0; the lanes folded
    j + (j + 4), then (0 + 2) + (1 + 3); divided by (div_d * div_h) * div_w."""
    lead = x.shape[:-3]
    out = np.empty(lead + tuple(out_dhw), np.float32)
    bins = [_bins(n, o) for n, o in zip(x.shape[-3:], out_dhw)]
    with np.errstate(invalid="ignore", over="ignore"):
        for od, (d0, d1) in enumerate(bins[0]):
            for oh, (h0, h1) in enumerate(bins[1]):
                for ow, (w0, w1) in enumerate(bins[2]):
                    lanes = [np.zeros(lead, np.float32) for _ in range(8)]
                    for d in range(d0, d1):
                        for h in range(h0, h1):
                            for i in range(w1 - w0):
                                lanes[i % 8] = lanes[i % 8] + x[..., d, h, w0 + i]
                    c = [lanes[j] + lanes[j + 4] for j in range(4)]
                    total = (c[0] + c[2]) + (c[1] + c[3])
                    out[..., od, oh, ow] = total / (
                        np.float32((d1 - d0) * (h1 - h0)) * np.float32(w1 - w0)
                    )
    return out


def _wide_plans():
    return [plan for plan in _core.cached_plans() if plan.kernel == "rows.wide_bins"]


@pytest.mark.parametrize(
    "shape, output",
    [
        ((2, 3, 20, 50), (3, 7)),  # the benchmark's 50 -> 7: 8 taps, no masked block
        ((2, 3, 37, 70), (7, 9)),  # 8-9 taps: a masked block of one lane or none
        ((1, 3, 9, 100), (2, 7)),  # 14-15 taps: one whole block, 6-7 lanes masked
        ((1, 2, 12, 127), (4, 8)),  # 15-17 taps: whole blocks 8 or 16, two masked
        ((1, 2, 6, 300), (3, 13)),  # 23-24 taps, 13 windows: the last block overlaps
        ((2, 2, 5, 33), (2, 2)),  # two windows of 17 taps, six lanes repeat the last
        ((1, 2, 3, 9, 43), (3, 4, 5)),  # 3D, one slice a window
    ],
)
def test_adaptive_wide_windows_all_rows_in_lanes(shape, output):
    """Adaptive averages whose W bins have 8+ taps and span 2+ rows sum all
    the rows of eight bins in lanes, one fold for the lot. Bit for bit against
    numpy in that order (a window of -0 alone gives +0; NaN, infinities and
    2^100 cancellations), by value against torch, 1 and 2 threads alike."""
    x = RNG.standard_normal(shape).astype(np.float32)
    planes = x.reshape(shape[0] * shape[1], -1)
    planes[0] = -0.0  # windows of -0 alone: +0
    planes[-1] = RNG.integers(-2, 3, planes.shape[1]) * 2.0**100  # cancellations
    planes[-1, RNG.choice(planes.shape[1], 3, replace=False)] = [np.nan, np.inf, -np.inf]
    x3 = x.reshape(shape[:2] + (1,) * (5 - len(shape)) + shape[2:])
    out3 = (1,) * (3 - len(output)) + tuple(output)
    _core._cache.clear()
    got = ovpool.adaptive_avg_pool(x, output)
    assert _wide_plans(), "the call took the wide-window kernel"
    want = _adaptive_lanes_reference(x3, out3).reshape(got.shape)
    np.testing.assert_array_equal(got, want)
    assert not np.signbit(got.reshape(planes.shape[0], -1)[0]).any(), "-0 alone sums to +0"
    for n in (1, 2):
        np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, output, num_threads=n), got)
    finite = RNG.standard_normal(shape).astype(np.float32)
    pool = F.adaptive_avg_pool2d if len(shape) == 4 else F.adaptive_avg_pool3d
    np.testing.assert_allclose(
        ovpool.adaptive_avg_pool(finite, output),
        pool(_t(finite), output).numpy(),
        rtol=2e-6,
        atol=1e-7,
    )


def test_adaptive_wide_windows_pooled_along_depth(monkeypatch):
    """The same kernel reading several depth slices a window (no slab and no
    slice-by-slice pass: both turned off here), bit for bit against numpy in
    its order and by value against torch."""
    monkeypatch.setitem(_core.TUNING, "slab_bytes", 0)
    monkeypatch.setitem(_core.TUNING, "prefetch_min_elements", 0)
    monkeypatch.setitem(_core.TUNING, "prefetch_min_plane", 0)
    _core._cache.clear()
    try:
        x = RNG.standard_normal((1, 3, 5, 9, 43)).astype(np.float32)
        got = ovpool.adaptive_avg_pool(x, (2, 4, 5))
        plans = _wide_plans()
        assert plans and all(plan.slice_rows == 0 and plan.pools_depth for plan in plans)
        np.testing.assert_array_equal(got, _adaptive_lanes_reference(x, (2, 4, 5)))
        np.testing.assert_allclose(
            got, F.adaptive_avg_pool3d(_t(x), (2, 4, 5)).numpy(), rtol=2e-6, atol=1e-7
        )
    finally:
        _core._cache.clear()


def test_adaptive_narrow_or_single_row_windows_stay_separable():
    """Bins under 8 taps, or of a single row, do not take the wide-window
    kernel (it was slower there): no plan of these calls takes it."""
    _core._cache.clear()
    for shape, output in [((1, 2, 30, 30), 7), ((1, 2, 1, 1000), (1, 7)), ((1, 2, 1000), 7)]:
        x = RNG.standard_normal(shape).astype(np.float32)
        ovpool.adaptive_avg_pool(x, output)
    assert not _wide_plans()
    _core._cache.clear()


def _adaptive_separable_reference(x, out_dhw):
    """Adaptive average over the last three axes in float32 in the separable
    order: depth sums first (slice after slice), then the column sums of the
    window rows top to bottom, then each bin's columns from 0 left to right,
    divided by (div_d * div_h) * div_w."""
    lead = x.shape[:-3]
    out = np.empty(lead + tuple(out_dhw), np.float32)
    bins = [_bins(n, o) for n, o in zip(x.shape[-3:], out_dhw)]
    with np.errstate(invalid="ignore", over="ignore"):
        for od, (d0, d1) in enumerate(bins[0]):
            depth = x[..., d0, :, :]
            for d in range(d0 + 1, d1):
                depth = depth + x[..., d, :, :]
            for oh, (h0, h1) in enumerate(bins[1]):
                col = depth[..., h0, :]
                for h in range(h0 + 1, h1):
                    col = col + depth[..., h, :]
                for ow, (w0, w1) in enumerate(bins[2]):
                    total = np.zeros(lead, np.float32)
                    for w in range(w0, w1):
                        total = total + col[..., w]
                    out[..., od, oh, ow] = total / (
                        np.float32((d1 - d0) * (h1 - h0)) * np.float32(w1 - w0)
                    )
    return out


@pytest.mark.parametrize(
    "shape, output",
    [
        ((2, 3, 30, 30), (7, 7)),  # 4-6 taps, seven output rows in eight lanes
        ((1, 2, 19, 60), (13, 40)),  # 2-3 taps, output rows 8 + 5
        ((1, 2, 9, 8), (9, 3)),  # rows of exactly 8: one block of columns
        ((2, 2, 11, 13), (4, 5)),  # rows of 13: the last block of columns overlaps
        ((1, 2, 10, 30, 30), (3, 7, 7)),  # the benchmark's aap3d_overlap: from the depth slab
        ((1, 3, 5, 12, 17), (2, 5, 6)),  # 3D, slab, rows of 17
        ((1, 2, 4, 9, 20), (4, 3, 6)),  # 3D, one slice a window (no slab)
        ((2, 3, 1000), (180,)),  # 1D: 6-7 taps, one output row
    ],
)
def test_adaptive_narrow_bins_eight_rows_at_a_time(shape, output):
    """Adaptive averages whose W bins have under 8 taps (rows of 8+) pool
    eight output rows at a time, the rows in vector lanes: the column sums of
    eight columns transposed in registers, each bin adding its columns as
    vectors. The same sums as the separable passes: bit for bit against numpy
    in that order (-0 alone gives +0; NaN, infinities, cancellations), by
    value against torch, 1 and 2 threads alike."""
    x = RNG.standard_normal(shape).astype(np.float32)
    planes = x.reshape(shape[0] * shape[1], -1)
    planes[0] = -0.0
    planes[-1] = RNG.integers(-2, 3, planes.shape[1]) * 2.0**100
    planes[-1, RNG.choice(planes.shape[1], 3, replace=False)] = [np.nan, np.inf, -np.inf]
    x3 = x.reshape(shape[:2] + (1,) * (5 - len(shape)) + shape[2:])
    out3 = (1,) * (3 - len(output)) + tuple(output)
    _core._cache.clear()
    got = ovpool.adaptive_avg_pool(x, output)
    plans = _core.cached_plans()
    assert plans and all(plan.narrow_rows and plan.prefetch == 0 for plan in plans)
    narrow = ovpool._isa.kernels.float16_in_registers()  # the builds with AVX2
    assert all(
        plan.kernel
        == (
            "rows.depth_slab"
            if plan.pools_depth
            else "rows.narrow_bins"
            if narrow
            else "rows.separable"
        )
        for plan in plans
    )
    np.testing.assert_array_equal(got, _adaptive_separable_reference(x3, out3).reshape(got.shape))
    assert not np.signbit(got.reshape(planes.shape[0], -1)[0]).any(), "-0 alone sums to +0"
    for n in (1, 2):
        np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, output, num_threads=n), got)
    finite = RNG.standard_normal(shape).astype(np.float32)
    pool = {3: F.adaptive_avg_pool1d, 4: F.adaptive_avg_pool2d, 5: F.adaptive_avg_pool3d}
    np.testing.assert_allclose(
        ovpool.adaptive_avg_pool(finite, output),
        pool[len(shape)](_t(finite), output).numpy(),
        rtol=2e-6,
        atol=1e-7,
    )


def test_adaptive_narrow_bins_of_very_long_rows_stay_separable():
    """The eight-rows kernel takes 8 (in_w + out_w) floats of scratch per
    thread; rows too long for 256 KiB of it keep the separable passes (no
    large allocation), with the same sums."""
    x = RNG.standard_normal((1, 2, 9000)).astype(np.float32)
    _core._cache.clear()
    got = ovpool.adaptive_avg_pool(x, 2000)  # 4-5 taps
    plans = _core.cached_plans()
    assert plans and not any(plan.narrow_rows for plan in plans)
    np.testing.assert_array_equal(
        got,
        _adaptive_separable_reference(x.reshape(1, 2, 1, 1, 9000), (1, 1, 2000)).reshape(got.shape),
    )
    np.testing.assert_allclose(
        got, F.adaptive_avg_pool1d(_t(x), 2000).numpy(), rtol=2e-6, atol=1e-7
    )
    _core._cache.clear()


def test_adaptive_narrow_bins_prefetched_rows_stay_separable(monkeypatch):
    """Where the rows are prefetched (large inputs) the narrow bins keep the
    row-by-row separable passes, which give the same bits."""
    monkeypatch.setitem(_core.TUNING, "prefetch_min_elements", 0)
    monkeypatch.setitem(_core.TUNING, "prefetch_min_plane", 0)
    _core._cache.clear()
    try:
        x = RNG.standard_normal((1, 3, 19, 60)).astype(np.float32)
        got = ovpool.adaptive_avg_pool(x, (13, 40))
        plans = _core.cached_plans()
        assert plans and all(
            plan.prefetch > 0 and plan.kernel == "rows.separable" for plan in plans
        )
        np.testing.assert_array_equal(
            got,
            _adaptive_separable_reference(x.reshape(1, 3, 1, 19, 60), (1, 13, 40)).reshape(
                got.shape
            ),
        )
    finally:
        _core._cache.clear()


# -- argmax paths ---------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, output",
    [((2, 4, 50, 50), 7), ((2, 4, 28, 28), 7), ((1, 3, 9, 300), (4, 17)), ((2, 2, 5, 8), (8, 5))],
)
def test_adaptive_max_indices_with_ties_and_nans(shape, output):
    """Vertical-first argmax: quantised values give many ties, NaNs test the
    last-NaN rule; indices must equal PyTorch's."""
    x = np.round(RNG.standard_normal(shape) * 2).astype(np.float32)
    x = _with_nans(x, 7)
    values, indices = ovpool.adaptive_max_pool(x, output)
    tv, ti = F.adaptive_max_pool2d(_t(x), output, return_indices=True)
    np.testing.assert_array_equal(values, tv.numpy())
    np.testing.assert_array_equal(indices, ti.numpy())


@pytest.mark.parametrize("width", [2, 3, 4, 5, 7, 8, 9, 11, 12, 15, 16, 17, 23, 50])
def test_adaptive_max_indices_every_row_width(width):
    """Adaptive bins of unequal size: the window rows are folded into column
    maxima in vector blocks (the last one overlapping), then each bin takes the
    smallest (row, column) holding its maximum without branches, and a bin
    with a NaN takes the exact loop. Quantised values tie across rows and
    columns; against torch in float32 and float64, and int8/uint8 against
    torch on the same values as float64 (torch has no 8-bit adaptive max)."""
    h = 13
    x = np.round(RNG.standard_normal((2, 3, h, width)) * 1.5).astype(np.float32)
    nans = _with_nans(x, 3)
    # bins 1-2, 2-4, 5-8 (one vector of columns) and 1 column wide
    for output in [
        (5, max(1, width // 2 + 1)),
        (3, max(1, width - 3)),
        (4, max(1, -(-width // 6))),
        (h, width),
    ]:
        for data in (x, nans):
            for dtype in (np.float32, np.float64):
                values, indices = ovpool.adaptive_max_pool(data.astype(dtype), output)
                tv, ti = F.adaptive_max_pool2d(_t(data.astype(dtype)), output, return_indices=True)
                np.testing.assert_array_equal(values, tv.numpy(), err_msg=str(output))
                np.testing.assert_array_equal(indices, ti.numpy(), err_msg=str(output))
        for dtype in (np.int8, np.uint8):
            ints = (x + 3).astype(dtype)
            values, indices = ovpool.adaptive_max_pool(ints, output)
            tv, ti = F.adaptive_max_pool2d(_t(ints.astype(np.float64)), output, return_indices=True)
            np.testing.assert_array_equal(values, tv.numpy().astype(dtype))
            np.testing.assert_array_equal(indices, ti.numpy())


@pytest.mark.parametrize(
    "in_w, out_w",
    [
        (50, 7),
        (56, 7),
        (64, 8),
        (51, 7),
        (46, 6),
        (37, 5),
        (100, 7),
        (30, 2),
        (16, 1),
        (8, 1),
        (41, 3),
    ],
)
@pytest.mark.parametrize("threads", [1, 2])
def test_adaptive_max_bins_by_window_against_torch(in_w, out_w, threads):
    """Adaptive bins of 1-16 columns over no more than 1.5x the row take each
    window on its own (AVX2 builds, ovpool_bins_group_f32: groups of up to 4
    vectors, windows of 8 columns in one, 9-16 in two, groups of 1 to 4
    windows of either kind side by side; the last window's vectors end at
    the row's end). Quantised values tie across rows and
    columns, -0.0 and +0.0 tie (the value is the element's own); a window
    with a NaN, or +inf and -inf in one column, takes the exact rule. 2D and
    3D, against torch."""
    x = np.round(RNG.standard_normal((2, 3, 15, in_w)) * 1.5).astype(np.float32)
    x[0, 0, :, :] = np.where(x[0, 0] == 0, -0.0, x[0, 0])
    x[0, 0, 3, :] = 0.0  # +0.0 below -0.0: the row above wins
    x[0, 0, 2, :] = -0.0
    x[0, 1, :, :] = -3.0
    x[0, 1, 5, 0] = np.inf  # +inf and -inf in column 0
    x[0, 1, 9, 0] = -np.inf
    x[0, 2, :, :] = -np.inf  # every tap -inf: the first one
    nans = _with_nans(x, 6)
    nans[1, 2, 14, in_w - 1] = np.nan  # the last tap of the last window
    for data in (x, nans):
        for output in ((5, out_w), (15, out_w)):
            values, indices = ovpool.adaptive_max_pool(data, output, num_threads=threads)
            tv, ti = F.adaptive_max_pool2d(_t(data), output, return_indices=True)
            np.testing.assert_array_equal(values, tv.numpy(), err_msg=str(output))
            np.testing.assert_array_equal(np.signbit(values), np.signbit(tv.numpy()))
            np.testing.assert_array_equal(indices, ti.numpy(), err_msg=str(output))
        x3 = data.reshape(2, 3, 3, 5, in_w)
        values, indices = ovpool.adaptive_max_pool(x3, (2, 3, out_w), num_threads=threads)
        tv, ti = F.adaptive_max_pool3d(_t(x3), (2, 3, out_w), return_indices=True)
        np.testing.assert_array_equal(values, tv.numpy())
        np.testing.assert_array_equal(indices, ti.numpy())


@pytest.mark.parametrize("kh", [2, 3, 4, 5, 7])
@pytest.mark.parametrize("width", [2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 23])
def test_values_max_row_nan_check_every_position(kh, width):
    """float32 max values: the window rows of an output row are combined with
    plain maxps (3 rows per sweep, the last vector block overlapping) and one
    NaN check per row, and a row with a NaN is redone with the exact rule.
    Plane i holds one NaN at flat position i, so every row of a group, every
    lane of a block and every tail column is hit, beside rows without NaN and
    +-inf; against torch, which propagates NaN."""
    h = kh + 3
    base = np.round(RNG.standard_normal((h, width)) * 2).astype(np.float32)
    base[0, 0], base[-1, -1] = np.inf, -np.inf
    x = np.repeat(base[None, None], h * width + 1, axis=1)
    x.reshape(x.shape[1], -1)[np.arange(h * width), np.arange(h * width)] = np.nan
    for k, s, p in [
        ((kh, 3), (1, 2), (kh // 2, 1)),
        ((kh, 2), (2, 1), (0, 0)),
        ((kh, 1), (1, 1), (0, 0)),
    ]:
        got = ovpool.max_pool(x, k, strides=s, pads=(p[0], p[1]) * 2)
        want = F.max_pool2d(_t(x), k, s, p).numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"kernel {k} strides {s}")


@pytest.mark.parametrize("k, s, p", [(3, 2, 1), (2, 1, 0), (3, 1, 1), (5, 2, 2)])
def test_interior_argmax_with_ties_against_torch(k, s, p):
    """Wide rows (40+ interior outputs) take the vectorised argmax."""
    x = np.round(RNG.standard_normal((2, 3, 11, 90))).astype(np.float32)
    values, indices = ovpool.max_pool(x, (k, k), strides=(s, s), pads=(p,) * 4, return_indices=True)
    tv, ti = F.max_pool2d(_t(x), k, s, p, return_indices=True)
    np.testing.assert_array_equal(values, tv.numpy())
    plane = x.shape[2] * x.shape[3]
    np.testing.assert_array_equal(indices % plane, ti.numpy())


@pytest.mark.parametrize("k, s", [(3, 2), (3, 1)])
@pytest.mark.parametrize("width", [33, 34, 35, 37, 40, 41, 47, 64, 90])
def test_interior_vector_argmax_every_width(k, s, width):
    """float32 3-tap windows at stride 2 or 1 take the SSE/AVX argmax of
    _simd.h over all window rows at once (rows clipped at the top and bottom
    by the padding): every block split, ties, NaN, and column-major indices,
    against torch; float64 (the scalar kernels) against the same torch result."""
    x = _with_nans(np.round(RNG.standard_normal((2, 3, 9, width)) * 1.5).astype(np.float32), 4)
    tv, ti = F.max_pool2d(_t(x), k, s, 1, return_indices=True)
    tv, ti = tv.numpy(), ti.numpy()
    h, w = x.shape[2:]
    planes = np.arange(6).reshape(2, 3, 1, 1) * h * w
    for dtype in (np.float32, np.float64):
        values, indices = ovpool.max_pool(
            x.astype(dtype), (k, k), strides=(s, s), pads=(1,) * 4, return_indices=True
        )
        np.testing.assert_array_equal(values, tv.astype(dtype))
        np.testing.assert_array_equal(indices, ti + planes)
        _, indices = ovpool.max_pool(
            x.astype(dtype),
            (k, k),
            strides=(s, s),
            pads=(1,) * 4,
            return_indices=True,
            storage_order=1,
        )
        np.testing.assert_array_equal(indices, ti // w + (ti % w) * h + planes)


# -- 16-bit floats -----------------------------------------------------------------


def _bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    return ml_dtypes.bfloat16


def _lp_reference(x, p):
    """(sum |x|^p)^(1/p) over 2x2 windows at stride 1, in float64."""
    windows = np.lib.stride_tricks.sliding_window_view(
        np.abs(x.astype(np.float64)), (2, 2), axis=(2, 3)
    )
    return (windows**p).sum(axis=(-2, -1)) ** (1.0 / p)


def _plane_indices(indices, x):
    return indices % (x.shape[2] * x.shape[3])


CASES_16 = {
    # name: (ovpool call, reference on float64/float32 input, exact?)
    "avg": (
        lambda x: ovpool.avg_pool(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)),
        lambda x: F.avg_pool2d(_t(x), 3, 2, 1, count_include_pad=False).numpy(),
        False,
    ),
    "max": (
        lambda x: ovpool.max_pool(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)),
        lambda x: F.max_pool2d(_t(x), 3, 2, 1).numpy(),
        True,
    ),
    "lp3": (lambda x: ovpool.lp_pool(x, (2, 2), p=3), lambda x: _lp_reference(x, 3), False),
    "adaptive_avg": (
        lambda x: ovpool.adaptive_avg_pool(x, (5, 3)),
        lambda x: F.adaptive_avg_pool2d(_t(x), (5, 3)).numpy(),
        False,
    ),
    "global_avg": (
        lambda x: ovpool.global_avg_pool(x),
        lambda x: x.astype(np.float64).mean(axis=(2, 3), keepdims=True),
        False,
    ),
    "global_max": (
        lambda x: ovpool.global_max_pool(x),
        lambda x: x.max(axis=(2, 3), keepdims=True),
        True,
    ),
    # tiling windows: rows widened in groups, pooled by the float32 tiling code
    "tile_avg": (
        lambda x: ovpool.avg_pool(x, (2, 2), strides=(2, 2)),
        lambda x: F.avg_pool2d(_t(x), 2, 2).numpy(),
        False,
    ),
    "tile_avg_3x1": (
        lambda x: ovpool.avg_pool(x, (3, 1), strides=(3, 1)),
        lambda x: F.avg_pool2d(_t(x), (3, 1), (3, 1)).numpy(),
        False,
    ),
    "tile_max": (
        lambda x: ovpool.max_pool(x, (4, 2), strides=(4, 2)),
        lambda x: F.max_pool2d(_t(x), (4, 2), (4, 2)).numpy(),
        True,
    ),
    "tile_max_3x3": (
        lambda x: ovpool.max_pool(x, (3, 3), strides=(3, 3)),
        lambda x: F.max_pool2d(_t(x), 3, 3).numpy(),
        True,
    ),
}


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(3, 700, 7, 7), (1, 3, 70, 70), (1, 2, 64, 64)])
def test_sixteen_bit_global_and_tiling_batches(half, shape):
    """Many small planes converted in batches, planes larger than the
    conversion chunk, and tiling rows in groups split across threads."""
    dtype = np.float16 if half == "float16" else _bfloat16()
    x = RNG.standard_normal(shape).astype(dtype)
    x32 = x.astype(np.float32)
    unit = 2.0**-11 if half == "float16" else 2.0**-8
    for n_threads in (1, 2):
        got = ovpool.global_avg_pool(x, num_threads=n_threads)
        np.testing.assert_allclose(
            got.astype(np.float64),
            x32.astype(np.float64).mean(axis=(2, 3), keepdims=True),
            rtol=unit * 1.05,
            atol=1e-6,
        )
        np.testing.assert_array_equal(
            ovpool.global_max_pool(x, num_threads=n_threads).astype(np.float32),
            x32.max(axis=(2, 3), keepdims=True),
        )
        got = ovpool.avg_pool(x, (2, 2), strides=(2, 2), num_threads=n_threads)
        np.testing.assert_allclose(
            got.astype(np.float64), F.avg_pool2d(_t(x32), 2, 2).numpy(), rtol=unit * 1.05, atol=1e-6
        )
        got = ovpool.max_pool(x, (2, 4), strides=(2, 4), num_threads=n_threads)
        np.testing.assert_array_equal(
            got.astype(np.float32), F.max_pool2d(_t(x32), (2, 4), (2, 4)).numpy()
        )


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(CASES_16))
def test_sixteen_bit_floats_against_references(half, name):
    """Widened per row, pooled in float32, rounded to nearest even. Max results
    are input values, so they equal the reference exactly; sums agree with the
    reference to half an ulp of the 16-bit type (plus float32 rounding)."""
    dtype = np.float16 if half == "float16" else _bfloat16()
    call, reference, exact = CASES_16[name]
    x = _with_nans(RNG.standard_normal((2, 3, 13, 10)), 2).astype(dtype)
    if not exact:
        x = RNG.standard_normal((2, 3, 13, 10)).astype(dtype)
    got = call(x)
    assert got.dtype == dtype
    want = reference(x.astype(np.float32))
    if exact:
        np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
    else:
        # rounding to nearest: relative error at most 2**-p (p = 11 / 8 bits),
        # slack for the float32 sums; truncation would be twice as far off
        unit = 2.0**-11 if half == "float16" else 2.0**-8
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=unit * 1.05, atol=1e-6)


def _assert_same_bits(got, want):
    """float16 arrays equal bit for bit, NaN as NaN: which NaN a sum of NaNs
    returns (and the sign of the NaN of +inf + -inf) follows the operand order
    the compiler picked for a commutative add, which IEEE leaves open."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(
        got.view(np.uint16)[~np.isnan(got)], want.view(np.uint16)[~np.isnan(want)]
    )


def _float16_specials(shape):
    """Normal values with subnormals, zeros of both signs, infinities and
    NaNs of both signs mixed in."""
    x = (RNG.standard_normal(shape) * 3).astype(np.float16)
    flat = x.reshape(-1)
    picks = RNG.choice(flat.size, size=8 * max(1, flat.size // 97), replace=False)
    specials = np.array(
        [6e-8, -3e-6, 0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan], dtype=np.float16
    )
    flat[picks] = np.resize(specials, picks.size)
    return x


@pytest.mark.parametrize("kh,kw", [(1, 1), (2, 2), (3, 2), (1, 4), (4, 4), (3, 1)])
@pytest.mark.parametrize("out_w", [4, 5, 7, 8, 9, 16, 17, 31])
def test_float16_tiling_same_bits_as_float32_narrowed(kh, kw, out_w):
    """float16 tiling rows converted in registers (x86-64-v3) or widened into
    scratch (baseline) give the bits of the float32 kernel on the widened
    input, rounded to nearest even by numpy: average and max, divisors that
    are and are not powers of two, 4- and 8-lane blocks with overlapping last
    blocks, 1 and 2 threads."""
    x = _float16_specials((2, 3, 5 * kh, out_w * kw))
    x32 = x.astype(np.float32)
    for n_threads in (1, 2):
        for op in (ovpool.avg_pool, ovpool.max_pool):
            got = op(x, (kh, kw), strides=(kh, kw), num_threads=n_threads)
            want = op(x32, (kh, kw), strides=(kh, kw), num_threads=n_threads).astype(np.float16)
            assert got.dtype == np.float16
            _assert_same_bits(got, want)
        # independently: torch on the widened input (tiling sums are bit-exact
        # with it), rounded to nearest even by numpy
        for op, ref in ((ovpool.avg_pool, F.avg_pool2d), (ovpool.max_pool, F.max_pool2d)):
            got = op(x, (kh, kw), strides=(kh, kw), num_threads=n_threads)
            np.testing.assert_array_equal(
                got, ref(_t(x32), (kh, kw), (kh, kw)).numpy().astype(np.float16)
            )


def _plane_sums_in_order(x):
    """The float32 sums of the planes of x (planes x elements) in the
    documented order, computed in numpy: 16 lanes from 0 (lane j adds
    elements j, j + 16, ...), lanes j + 8 -> j, j + 4 -> j, then (0 + 2) +
    (1 + 3), plus the tail added in order from 0."""
    n = x.shape[1]
    full = n - n % 16
    acc = np.zeros((x.shape[0], 16), np.float32)
    for i in range(0, full, 16):
        acc = acc + x[:, i : i + 16]
    a = acc[:, :8] + acc[:, 8:]
    c = a[:, :4] + a[:, 4:]
    total = (c[:, 0] + c[:, 2]) + (c[:, 1] + c[:, 3])
    tail = np.zeros(x.shape[0], np.float32)
    for i in range(full, n):
        tail = tail + x[:, i]
    return total + tail


@pytest.mark.parametrize("size", [1, 15, 16, 17, 25, 36, 48, 49, 63, 64, 100, 196])
def test_float32_global_average_sums_in_the_documented_order(size):
    """float32 global averages, bit for bit against that order computed in
    numpy: planes of 16 to 63 elements go eight at a time with one fold for
    the eight, the others one by one (19 planes: two blocks of eight and
    three alone), at 1 and 2 threads."""
    x = RNG.standard_normal((1, 19, size)).astype(np.float32)
    x[0, 4, :] *= 1e6  # sums that round differently in another order
    want = _plane_sums_in_order(x[0]) / np.float32(size)
    for n_threads in (1, 2):
        got = ovpool.global_avg_pool(x, num_threads=n_threads).reshape(-1)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("size", [1, 7, 8, 15, 16, 17, 19, 32, 35, 49, 63, 196, 1000, 4096])
def test_float16_global_same_bits_as_float32_narrowed(size):
    """Global average and max of float16 planes (in registers on x86-64-v3)
    against the float32 kernel on the widened planes, bit for bit, for plane
    sizes around the 8- and 16-lane blocks and up to the conversion chunk
    (float16 averages of 16+ elements and float32 ones of 16 to 63 sum
    eight planes at a time, larger float32 ones a plane at a time: the same
    order, tails of 0-15 taps)."""
    x = _float16_specials((3, 40, 1, size))
    x32 = x.astype(np.float32)
    for n_threads in (1, 2):
        for op in (ovpool.global_avg_pool, ovpool.global_max_pool):
            got = op(x, num_threads=n_threads)
            want = op(x32, num_threads=n_threads).astype(np.float16)
            _assert_same_bits(got, want)
        # independently: numpy's maximum, and the float64 mean to half an ulp
        np.testing.assert_array_equal(
            ovpool.global_max_pool(x, num_threads=n_threads),
            x32.max(axis=(2, 3), keepdims=True).astype(np.float16),
        )
        finite = np.where(np.isfinite(x32), x32, 0).astype(np.float16)
        np.testing.assert_allclose(
            ovpool.global_avg_pool(finite, num_threads=n_threads).astype(np.float64),
            finite.astype(np.float64).mean(axis=(2, 3), keepdims=True),
            rtol=2.0**-11 * 1.05,
            atol=1e-6,
        )


@pytest.mark.parametrize(
    "kernel,strides,pads,dilations",
    [
        ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
        ((2, 2), (1, 1), (0, 0, 0, 0), (1, 1)),
        ((3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
        ((5, 2), (1, 3), (2, 1, 2, 1), (1, 2)),
        ((1, 3), (1, 2), (0, 1, 0, 1), (1, 1)),
        ((7, 3), (2, 2), (3, 1, 3, 1), (1, 1)),
    ],
)
@pytest.mark.parametrize("width", [5, 8, 9, 16, 23, 57])
@pytest.mark.parametrize("with_nan", [False, True])
def test_float16_max_rows_same_bits_as_float32(kernel, strides, pads, dilations, width, with_nan):
    """float16 max pooling by rows: the vertical pass converts in registers
    (x86-64-v3) when the window rows hold no NaN and widens them otherwise;
    either way the values are the float32 kernel's on the widened input."""
    x = (
        _float16_specials((2, 3, 11, width))
        if with_nan
        else (RNG.standard_normal((2, 3, 11, width)) * 3).astype(np.float16)
    )
    x32 = x.astype(np.float32)
    kwargs = dict(strides=strides, pads=pads, dilations=dilations)
    for n_threads in (1, 2):
        got = ovpool.max_pool(x, kernel, num_threads=n_threads, **kwargs)
        want = ovpool.max_pool(x32, kernel, num_threads=n_threads, **kwargs).astype(np.float16)
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
        reference = F.max_pool2d(
            _t(x32), kernel, strides, (pads[0], pads[1]), dilation=dilations
        ).numpy()
        np.testing.assert_array_equal(got.astype(np.float32), reference)


def test_float16_in_registers_only_where_the_build_has_f16c():
    """The x86-64-v3 build converts float16 in registers, the baseline build
    (no F16C in x86-64) widens into scratch."""
    from ovpool import _isa

    assert _isa.kernels.float16_in_registers() == (_isa.name == "x86-64-v3")


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
def test_sixteen_bit_float_indices_against_torch(half):
    dtype = np.float16 if half == "float16" else _bfloat16()
    x = _with_nans(np.round(RNG.standard_normal((2, 3, 13, 10)) * 2), 2).astype(dtype)
    x32 = x.astype(np.float32)
    values, indices = ovpool.max_pool(x, (2, 2), strides=(2, 2), return_indices=True)
    tv, ti = F.max_pool2d(_t(x32), 2, 2, return_indices=True)
    np.testing.assert_array_equal(values.astype(np.float32), tv.numpy())
    np.testing.assert_array_equal(_plane_indices(indices, x), ti.numpy())
    values, indices = ovpool.adaptive_max_pool(x, (4, 4))
    tv, ti = F.adaptive_max_pool2d(_t(x32), (4, 4), return_indices=True)
    np.testing.assert_array_equal(values.astype(np.float32), tv.numpy())
    np.testing.assert_array_equal(indices, ti.numpy())


@pytest.mark.parametrize("width", [30, 64, 500, 1000, 1001])
def test_float32_1d_three_wide_tilings_match_torch(width):
    """float32 1D max and average 3 s3 (the tile kernel's scalar passes,
    rows of a 1D input merged into taller planes), any leftover of the row,
    against PyTorch bit for bit at 1 and 2 threads."""
    x = RNG.standard_normal((3, 40, width)).astype(np.float32)
    for n_threads in (1, 2):
        np.testing.assert_array_equal(
            ovpool.max_pool(x, (3,), strides=(3,), num_threads=n_threads),
            F.max_pool1d(_t(x), 3, 3).numpy(),
        )
        np.testing.assert_array_equal(
            ovpool.avg_pool(x, (3,), strides=(3,), num_threads=n_threads),
            F.avg_pool1d(_t(x), 3, 3).numpy(),
        )
