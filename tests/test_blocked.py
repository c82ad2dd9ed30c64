"""The channel-blocked kernel (``Path.blocked``) against independent references.

The blocked kernel takes groups of eight planes into the lanes of a vector
and serves every family, window and rank from the window tables. Here every
shape is sent through it (``TUNING["blocked_everywhere"]``): random fixed
windows (kernels, strides, dilations, pads, both roundings) in 1D, 2D and
3D, adaptive bins of equal and unequal size, groups of fewer than eight
planes, bands of rows (a small ``blocked_bytes``), against PyTorch's pooling
(values and indices), ONNX's reference and numpy; max values and indices the
same bits as the other paths, with ties of +0 and -0, NaN and -inf.
"""

import numpy as np
import pytest

import ovpool
from ovpool import _core

torch = pytest.importorskip("torch")
F = torch.nn.functional

RNG = np.random.default_rng(20270127)


@pytest.fixture
def blocked(monkeypatch):
    """Every call through the blocked kernel (and the plans rebuilt)."""
    monkeypatch.setitem(_core.TUNING, "blocked_everywhere", True)
    _core._cache.clear()
    yield
    _core._cache.clear()


def _with(tuning, call):
    """call() with _core.TUNING updated by ``tuning`` (plans rebuilt)."""
    saved = dict(_core.TUNING)
    _core.TUNING.update(tuning)
    _core._cache.clear()
    try:
        return call()
    finally:
        _core.TUNING.clear()
        _core.TUNING.update(saved)
        _core._cache.clear()


def _paths():
    return {plan.path for plan in _core.cached_plans()}


def _t(x):
    return torch.from_numpy(np.ascontiguousarray(x))


def _data(shape, dtype=np.float32, style="normal"):
    x = RNG.standard_normal(shape)
    if style == "ties":  # many equal values, +0 and -0 among them
        x = np.round(x * 2) / 2
    elif style == "specials":
        flat = x.reshape(-1)
        flat[RNG.integers(0, flat.size, max(1, flat.size // 5))] = -np.inf
        flat[RNG.integers(0, flat.size, max(1, flat.size // 97))] = np.nan
    return x.astype(dtype)


def _window(rank):
    """(kernel, strides, pads, dilations, ceil) of a random fixed window."""
    kernel = [int(v) for v in RNG.integers(1, 6, rank)]
    strides = [int(v) for v in RNG.integers(1, 4, rank)]
    dilations = [int(v) if RNG.random() < 0.3 else 1 for v in RNG.integers(1, 3, rank)]
    pads = [int(RNG.integers(0, k // 2 + 1)) for k in kernel]
    return kernel, strides, pads, dilations, bool(RNG.random() < 0.4)


def _shape(rank, planes, kernel, dilations):
    sizes = [
        int((k - 1) * d + 1 + RNG.integers(0, 12 if rank < 3 else 5))
        for k, d in zip(kernel, dilations)
    ]
    return (1, planes, *sizes)


CASES = [(rank, planes, seed) for rank in (1, 2, 3) for planes in (3, 8, 21) for seed in range(4)]


@pytest.mark.parametrize("rank, planes, seed", CASES)
def test_max_values_and_indices_against_torch(blocked, rank, planes, seed):
    kernel, strides, pads, dilations, ceil = _window(rank)
    x = _data(_shape(rank, planes, kernel, dilations))
    values, indices = ovpool.max_pool(
        x,
        kernel,
        strides=strides,
        pads=pads * 2,
        dilations=dilations,
        ceil_mode=ceil,
        return_indices=True,
    )
    assert _paths() == {"blocked"}
    fn = getattr(F, f"max_pool{rank}d")
    want, want_idx = fn(
        _t(x), kernel, strides, pads, dilations, ceil_mode=ceil, return_indices=True
    )
    np.testing.assert_array_equal(values, want.numpy())
    plane = int(np.prod(x.shape[2:]))
    flat = want_idx.numpy() + (np.arange(planes) * plane).reshape(1, planes, *([1] * rank))
    np.testing.assert_array_equal(indices, flat)  # ONNX: flat over the whole tensor
    np.testing.assert_array_equal(
        ovpool.max_pool(
            x, kernel, strides=strides, pads=pads * 2, dilations=dilations, ceil_mode=ceil
        ),
        values,
    )


@pytest.mark.parametrize(
    "shape, kernel, stride, pad",
    [
        ((2, 8, 32, 32), 3, 2, 1),  # 14 of 16 outputs a row inside: not the vector rows
        ((1, 8, 6, 28, 28), 3, 1, 0),  # depth taps: not the vector rows
        ((2, 8, 100), 5, 3, 0),  # 1D windows the vector rows do not take
    ],
)
@pytest.mark.parametrize("style", ["ties", "specials"])
def test_indices_the_argmax_vector_rows_leave_go_blocked(shape, kernel, stride, pad, style):
    """Max with indices on windows the argmax kernel would take output by
    output (its vector rows need 16+ interior outputs a row and one depth
    tap) goes through the blocked kernel by default, PyTorch's values and
    first-maximum indices."""
    rank = len(shape) - 2
    x = _data(shape, style=style)
    _core._cache.clear()
    values, indices = ovpool.max_pool(
        x, (kernel,) * rank, strides=(stride,) * rank, pads=(pad,) * (2 * rank), return_indices=True
    )
    assert _paths() == {"blocked"}
    want, want_idx = getattr(F, f"max_pool{rank}d")(_t(x), kernel, stride, pad, return_indices=True)
    np.testing.assert_array_equal(values, want.numpy())
    plane = int(np.prod(shape[2:]))
    planes = np.arange(shape[0] * shape[1]).reshape(shape[0], shape[1], *([1] * rank)) * plane
    np.testing.assert_array_equal(indices, want_idx.numpy() + planes)


@pytest.mark.parametrize("rank, planes, seed", CASES)
def test_averages_against_torch(blocked, rank, planes, seed):
    kernel, strides, pads, _, ceil = _window(rank)
    x = _data(_shape(rank, planes, kernel, [1] * rank))
    fn = getattr(F, f"avg_pool{rank}d")
    for cip in (False, True):
        got = ovpool.avg_pool(
            x, kernel, strides=strides, pads=pads * 2, ceil_mode=ceil, count_include_pad=cip
        )
        want = fn(_t(x), kernel, strides, pads, ceil_mode=ceil, count_include_pad=cip)
        np.testing.assert_allclose(got, want.numpy(), rtol=2e-6, atol=1e-6)
    assert _paths() == {"blocked"}


def _column_first_means(x, kernel, strides):
    """Unpadded averages summed as the row kernel sums: each column of a
    window over its rows (depth, then height) in order, then the columns in
    order, in x's float type, divided once by the window's size."""
    t = x.dtype.type
    *lead, (kh, kw) = [kernel[:-2], kernel[-2:]]
    kd = int(np.prod(lead[0])) if lead[0] else 1
    out_shape = [(n - k) // s + 1 for n, k, s in zip(x.shape[2:], kernel, strides)]
    out = np.empty(x.shape[:2] + tuple(out_shape), x.dtype)
    for o in np.ndindex(*out_shape):
        start = [i * s for i, s in zip(o, strides)]
        window = x[(Ellipsis,) + tuple(slice(b, b + k) for b, k in zip(start, kernel))]
        rows = window.reshape(x.shape[:2] + (kd * kh, kw))  # (depth, row) x column
        total = None
        for c in range(kw):
            col = rows[..., 0, c].copy()
            for r in range(1, kd * kh):
                col = (col + rows[..., r, c]).astype(t)
            total = col if total is None else (total + col).astype(t)
        out[(Ellipsis,) + o] = (total / t(kd * kh * kw)).astype(t)
    return out


@pytest.mark.parametrize(
    "shape, kernel, strides",
    [
        ((2, 19, 23, 21), (7, 7), (2, 2)),
        ((1, 13, 19, 17), (5, 5), (1, 1)),
        ((1, 9, 7, 9, 16), (3, 5, 5), (2, 1, 1)),
    ],
)
@pytest.mark.parametrize("threads", [1, 2])
def test_wide_windows_sum_columns_first(shape, kernel, strides, threads):
    """Averages of windows many rows tall and wide sum each column over its
    rows, then the columns (the row kernel's order): bit for bit against that
    order computed here, and close to PyTorch's row-major sums."""
    x = _data(shape)
    _core._cache.clear()
    got = ovpool.avg_pool(x, kernel, strides=strides, num_threads=threads)
    (plan,) = _core.cached_plans()
    assert plan.path == "blocked" and "columns pooled once first" in plan.explain(1)
    np.testing.assert_array_equal(got, _column_first_means(x, kernel, strides))
    fn = getattr(F, f"avg_pool{len(kernel)}d")
    want = fn(_t(x), kernel, strides).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("rank", (1, 2, 3))
@pytest.mark.parametrize("p", (1, 2, 3))
def test_lp_norms_against_onnx_reference(blocked, rank, p):
    from references import onnx_pool_attrs, onnx_reference

    kernel, strides, pads, _, _ = _window(rank)
    x = _data(_shape(rank, 11, kernel, [1] * rank))
    got = ovpool.lp_pool(x, kernel, strides=strides, pads=pads * 2, p=p)
    attrs = onnx_pool_attrs(kernel, strides=strides, pads=pads * 2)
    attrs["p"] = p
    (want,) = onnx_reference("LpPool", [x], attrs, opset=18)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    assert _paths() == {"blocked"}


def test_dilated_averages_against_onnx_runtime(blocked):
    """Dilated windows with padding and ceil mode, count_include_pad: against
    ONNX Runtime (onnx.reference 1.23 gets some ceil-mode dilated windows
    wrong; ORT agrees with a tap-by-tap count of the spec on 300 random
    configurations)."""
    from references import onnx_pool_attrs, onnxruntime_run

    for rank in (1, 2, 3):
        kernel, strides, pads, dilations, ceil = _window(rank)
        dilations = [2] * rank
        x = _data(_shape(rank, 5, kernel, dilations))
        got = ovpool.avg_pool(
            x,
            kernel,
            strides=strides,
            pads=pads * 2,
            dilations=dilations,
            ceil_mode=ceil,
            count_include_pad=True,
        )
        attrs = onnx_pool_attrs(
            kernel,
            strides=strides,
            pads=pads * 2,
            dilations=dilations,
            ceil_mode=int(ceil),
            count_include_pad=1,
        )
        (want,) = onnxruntime_run("AveragePool", [x], attrs, opset=19)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize(
    "shape, size",
    [
        ((2, 5, 28, 28), 7),
        ((1, 9, 14, 17), (9, 12)),
        ((3, 4, 30), 7),
        ((1, 3, 6, 10, 13), (4, 3, 5)),
        ((1, 10, 7, 9), (7, 2)),
    ],
)
def test_adaptive_bins_against_torch(blocked, shape, size):
    x = _data(shape)
    rank = len(shape) - 2
    got = ovpool.adaptive_avg_pool(x, size)
    want = getattr(F, f"adaptive_avg_pool{rank}d")(_t(x), size)
    np.testing.assert_allclose(got, want.numpy(), rtol=2e-6, atol=1e-6)
    values, indices = ovpool.adaptive_max_pool(x, size)
    want, want_idx = getattr(F, f"adaptive_max_pool{rank}d")(_t(x), size, return_indices=True)
    np.testing.assert_array_equal(values, want.numpy())
    np.testing.assert_array_equal(indices, want_idx.numpy())
    assert _paths() == {"blocked"}


def _row_major_means(x, size):
    """Adaptive means summed tap by tap in row-major order (float16 in
    float32), divided by the bin's size and rounded to x's dtype."""
    compute = np.float32 if x.dtype == np.float16 else x.dtype.type
    spatial = x.shape[2:]
    bins = [[(o * n // m, -(-(o + 1) * n // m)) for o in range(m)] for n, m in zip(spatial, size)]
    planes = x.reshape((-1,) + spatial).astype(compute)
    out = np.empty((planes.shape[0],) + tuple(size), compute)
    for o in np.ndindex(*size):
        window = tuple(slice(*bins[a][i]) for a, i in enumerate(o))
        taps = planes[(slice(None),) + window].reshape(planes.shape[0], -1)
        out[(slice(None),) + o] = np.cumsum(taps, axis=1, dtype=compute)[:, -1] / compute(
            taps.shape[1]
        )
    return out.astype(x.dtype).reshape(x.shape[:2] + tuple(size))


@pytest.mark.parametrize(
    "shape, size",
    [
        ((2, 5, 7, 7), (4, 7)),  # H 7 -> 4 (bins of 2 and 3), W whole columns
        ((1, 9, 19, 19), (7, 6)),  # W bins of 4 at a step of 3
        ((1, 11, 35, 14), (3, 7)),  # W tiles of 2, H bins of 12 and 13
        ((1, 4, 10, 7, 7), (6, 5, 7)),  # D and H unequal
        ((2, 4, 12, 12), (5, 12)),
        ((1, 9, 14, 17), (9, 12)),  # W bins of 2 and 3: outputs grouped by list
        ((1, 6, 17, 17), (1, 7)),
        ((2, 4, 8, 8), (7, 6)),  # W bins all of 2, at steps of 1 and 2
        ((3, 4, 30), 7),
        ((1, 3, 6, 10, 13), (4, 3, 5)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("style", ["normal", "ties", "specials"])
def test_adaptive_bins_take_tap_lists(blocked, shape, size, dtype, style):
    """Bins of unequal size: a tap list a row (W bins of one size) or a group
    of outputs (W bins of two sizes), outputs in batches as for fixed
    windows, each output's first tap from the tables. Values and
    indices against torch (first maximum, last NaN, ties of +0 and -0), sums
    the same bits as a row-major sum of each bin, 1 and 2 threads alike."""
    x = _data(shape, dtype, style)
    rank = len(shape) - 2
    size = (size,) if isinstance(size, int) else size
    _core._cache.clear()
    values, indices = ovpool.adaptive_max_pool(x, size)
    mean = ovpool.adaptive_avg_pool(x, size)
    text = " ".join(plan.explain(1) for plan in _core.cached_plans())
    assert text.count("a tap list a") == 2 and _paths() == {"blocked"}, text
    want, want_idx = getattr(F, f"adaptive_max_pool{rank}d")(
        _t(x.astype(np.float32) if dtype == np.float16 else x), size, return_indices=True
    )
    np.testing.assert_array_equal(indices, want_idx.numpy())
    np.testing.assert_array_equal(
        values.view(f"u{values.itemsize}"), want.numpy().astype(dtype).view(f"u{values.itemsize}")
    )
    want = _row_major_means(x, size)
    np.testing.assert_array_equal(mean, want)  # NaN where numpy's is NaN
    same = ~np.isnan(want)
    np.testing.assert_array_equal(
        mean[same].view(f"u{mean.itemsize}"), want[same].view(f"u{mean.itemsize}")
    )
    if style == "normal":
        ref = getattr(F, f"adaptive_avg_pool{rank}d")(_t(x.astype(np.float64)), size).numpy()
        tol = 2e-3 if dtype == np.float16 else 1e-6
        np.testing.assert_allclose(mean.astype(np.float64), ref, rtol=tol, atol=tol)
    for n in (1, 2):
        np.testing.assert_array_equal(ovpool.adaptive_max_pool(x, size, num_threads=n)[1], indices)
        np.testing.assert_array_equal(
            ovpool.adaptive_avg_pool(x, size, num_threads=n).view(f"u{mean.itemsize}"),
            mean.view(f"u{mean.itemsize}"),
        )


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.float16, "bfloat16", np.int8, np.uint8]
)
@pytest.mark.parametrize("style", ["ties", "specials"])
def test_max_bits_as_the_other_paths(dtype, style):
    """Max values and indices: the same bits through the blocked kernel as
    through the other paths (a NaN gives the canonical NaN, -inf and empty
    windows come out alike), the sign of a zero maximum included where a +0
    and a -0 tie (the separable passes combine 4+ rows three at a time,
    keeping the earlier group's zero, and the blocked kernel's tap lists copy
    it: docs/reference/semantics.md)."""
    if dtype == "bfloat16":
        import ml_dtypes

        dtype = ml_dtypes.bfloat16
    kinds = np.dtype(dtype).kind
    for rank in (1, 2, 3):
        for _ in range(4):
            kernel, strides, pads, dilations, ceil = _window(rank)
            shape = _shape(rank, 13, kernel, dilations)
            if kinds in "iu":
                info = np.iinfo(dtype)
                x = RNG.integers(info.min, int(info.max) + 1, shape).astype(dtype) // 16
            else:
                x = _data(shape, dtype, style)

            def call(
                x=x, kernel=kernel, strides=strides, pads=pads, dilations=dilations, ceil=ceil
            ):
                return (
                    ovpool.max_pool(
                        x,
                        kernel,
                        strides=strides,
                        pads=pads * 2,
                        dilations=dilations,
                        ceil_mode=ceil,
                    ),
                    *ovpool.max_pool(
                        x,
                        kernel,
                        strides=strides,
                        pads=pads * 2,
                        dilations=dilations,
                        ceil_mode=ceil,
                        return_indices=True,
                    ),
                )

            new = _with({"blocked_everywhere": True}, call)
            old = _with({"blocked_bytes": 0}, call)
            for a, b in zip(new, old):
                assert a.dtype == b.dtype and a.shape == b.shape
                same = a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")
                assert same.all(), (rank, kernel, strides, pads, dilations, ceil)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zero_maxima_of_deep_windows_as_the_depth_slab(dtype):
    """3D windows of 4+ depth and height rows: the row kernel pools along D
    first (the depth slab: depth rows three at a time, then the slab's rows
    three at a time, each keeping the earlier group's zero; float64 one by
    one), and the blocked kernel's tap lists keep the same zero where a +0
    and a -0 tie; windows cut by padding at the front of D or H included.
    The values are PyTorch's."""
    for kernel, strides, pads in [
        ((4, 5, 2), (1, 1, 2), (0, 0, 0)),
        ((5, 4, 3), (2, 1, 1), (2, 1, 1)),
        ((6, 6, 1), (1, 2, 1), (3, 2, 0)),
        ((4, 4, 4), (3, 3, 3), (1, 2, 0)),
    ]:
        shape = (1, 16, kernel[0] + 5, kernel[1] + 6, kernel[2] + 4)
        x = np.where(RNG.random(shape) < 0.5, 0.0, -0.0).astype(dtype)
        x[RNG.random(shape) < 0.05] = -1.0

        def call(x=x, kernel=kernel, strides=strides, pads=pads):
            _core._cache.clear()
            result = ovpool.max_pool(x, kernel, strides=strides, pads=pads * 2)
            return result, {plan.kernel for plan in _core.cached_plans()}

        new, new_paths = _with({"blocked_everywhere": True}, call)
        old, old_paths = _with({"blocked_bytes": 0}, call)
        assert new_paths == {"blocked"} and old_paths == {"rows.depth_slab"}, (new_paths, old_paths)
        width = np.dtype(dtype).itemsize
        assert (new.view(f"u{width}") == old.view(f"u{width}")).all(), kernel
        pad = [p for p in reversed(pads) for _ in range(2)]
        want = F.max_pool3d(F.pad(_t(x), pad, value=-np.inf), kernel, strides).numpy()
        np.testing.assert_array_equal(new, want)


@pytest.mark.parametrize("style", ["zeros", "specials"])
def test_three_wide_maxima_of_the_depth_slab_in_one_call(style):
    """float32 3D max values of windows 3 wide at W stride 1 or 2 (2 wide at
    stride 1) over up to 3 slab rows: the depth slab's rows go through the
    run path's 3-wide kernel in one call, up to a row whose window rows hold
    a NaN. The bits are the blocked kernel's (the same zero where a +0 and a
    -0 tie, a NaN, -inf), the values PyTorch's."""
    for kernel, strides, pads in [
        ((3, 3, 3), (1, 1, 1), (1, 1, 1)),
        ((3, 3, 3), (2, 2, 2), (0, 0, 0)),
        ((2, 2, 2), (1, 1, 1), (0, 0, 0)),
        ((3, 2, 3), (1, 1, 2), (1, 0, 1)),
        ((4, 3, 2), (2, 1, 1), (0, 1, 1)),
    ]:
        shape = (2, 5, kernel[0] + 6, kernel[1] + 9, kernel[2] + 20)
        if style == "zeros":
            x = np.where(RNG.random(shape) < 0.5, 0.0, -0.0).astype(np.float32)
            x[RNG.random(shape) < 0.05] = -1.0
        else:
            x = _data(shape, np.float32, "specials")

        def call(x=x, kernel=kernel, strides=strides, pads=pads):
            _core._cache.clear()
            result = ovpool.max_pool(x, kernel, strides=strides, pads=pads * 2)
            return result, [str(plan) for plan in _core.cached_plans()]

        new, new_plans = _with({"blocked_bytes": 0}, call)
        old, old_plans = _with({"blocked_everywhere": True}, call)
        assert "by the 3-wide kernel, in one call" in new_plans[0], new_plans
        assert "path blocked" in old_plans[0], old_plans
        assert (new.view("u4") == old.view("u4")).all(), kernel
        pad = [p for p in reversed(pads) for _ in range(2)]
        want = F.max_pool3d(F.pad(_t(x), pad, value=-np.inf), kernel, strides).numpy()
        np.testing.assert_array_equal(new, want)


@pytest.mark.parametrize("style", ["zeros", "specials"])
def test_3d_max_tilings_take_the_blocked_kernel(style):
    """float32 3D max values of whole windows as wide as their stride along
    every axis go to the blocked kernel on slices up to 64x64 (the depth slab
    takes larger ones, and windows that overlap or are padded): the slab's
    bits (the same zero where a +0 and a -0 tie, a NaN, -inf), PyTorch's
    values."""
    for kernel, shape, blocked in [
        ((2, 2, 2), (2, 3, 8, 32, 32), True),
        ((3, 3, 3), (1, 4, 9, 33, 34), True),
        ((2, 2, 2), (1, 2, 5, 64, 64), True),
        ((2, 2, 2), (1, 2, 4, 66, 64), False),
        ((2, 3, 2), (1, 9, 4, 12, 12), True),
    ]:
        if style == "zeros":
            x = np.where(RNG.random(shape) < 0.5, 0.0, -0.0).astype(np.float32)
            x[RNG.random(shape) < 0.05] = -1.0
        else:
            x = _data(shape, np.float32, "specials")

        def call(x=x, kernel=kernel):
            _core._cache.clear()
            result = ovpool.max_pool(x, kernel, strides=kernel)
            return result, [str(plan) for plan in _core.cached_plans()]

        new, new_plans = call()
        old, old_plans = _with({"blocked_bytes": 0}, call)
        assert ("path blocked" in new_plans[0]) == blocked, new_plans
        assert "depth_slab" in old_plans[0], old_plans
        assert (new.view("u4") == old.view("u4")).all(), kernel
        np.testing.assert_array_equal(new, F.max_pool3d(_t(x), kernel, kernel).numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("style", ["zeros", "specials"])
def test_max_columns_pooled_once_as_whole_windows(dtype, style):
    """Max values of windows of many rows and columns: the blocked kernel
    pools each column a row's windows read once, then the windows over their
    columns (``Plan.column_span``). The bits are those of the rows path
    (the same zero where a +0 and a -0 tie, windows cut by padding at the
    front included; a NaN or -inf alike), the values PyTorch's."""
    for kernel, strides, pads, dilations in [
        ((7, 7), (1, 1), (3, 3), (1, 1)),
        ((5, 4), (2, 1), (2, 1), (1, 1)),
        ((3, 5), (2, 1), (1, 2), (1, 1)),
        ((5, 5), (1, 1), (4, 4), (2, 2)),
        ((4, 4, 4), (1, 1, 1), (1, 2, 0), (1, 1, 1)),
        ((3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1)),
    ]:
        shape = (1, 13, *[k + 6 for k in kernel])
        if style == "zeros":
            x = np.where(RNG.random(shape) < 0.5, 0.0, -0.0).astype(dtype)
            x[RNG.random(shape) < 0.1] = -1.0
        else:
            x = _data(shape, dtype, "specials")

        def call(x=x, kernel=kernel, strides=strides, pads=pads, dilations=dilations):
            _core._cache.clear()
            result = ovpool.max_pool(x, kernel, strides=strides, pads=pads * 2, dilations=dilations)
            return result, [str(plan) for plan in _core.cached_plans()]

        new, new_plans = _with({"blocked_everywhere": True}, call)
        old, old_plans = _with({"blocked_bytes": 0}, call)
        assert len(new_plans) == 1 and "columns pooled once" in new_plans[0], new_plans
        assert "path blocked" not in old_plans[0], old_plans
        width = np.dtype(dtype).itemsize
        assert (new.view(f"u{width}") == old.view(f"u{width}")).all(), (kernel, strides)
        pad = [p for p in reversed(pads) for _ in range(2)]
        pool = F.max_pool3d if len(kernel) == 3 else F.max_pool2d
        wide = _t(x.astype(np.float64 if dtype == np.float64 else np.float32))
        want = pool(F.pad(wide, pad, value=-np.inf), kernel, strides, dilation=dilations)
        np.testing.assert_array_equal(new, want.numpy().astype(dtype))


@pytest.mark.parametrize(
    "dtype, keys",
    [
        (np.float32, False),
        (np.float64, False),
        (np.float16, False),
        (np.float16, True),
        (np.int8, False),
    ],
)
@pytest.mark.parametrize("style", ["zeros", "specials", "normal"])
@pytest.mark.parametrize("threads", [1, 2])
def test_indices_by_rows_as_whole_windows(dtype, keys, style, threads):
    """Max with indices of windows of many rows and columns: the blocked
    kernel pools each row's W windows once, then each window over its rows
    (``Plan.row_taps``). The values and indices are those of whole windows
    (the first maximum, a +0 and a -0 equal; the last NaN), float16 as
    order keys and as floats, bands of rows, padding, dilation and
    storage_order included, and PyTorch's."""
    for kernel, strides, pads, dilations, order in [
        ((5, 5, 5), (1, 1, 1), (0, 0, 0), (1, 1, 1), 0),
        ((3, 3, 3), (1, 2, 1), (1, 1, 1), (1, 1, 1), 0),
        ((7, 7), (2, 2), (3, 3), (1, 1), 0),
        ((3, 4), (1, 2), (1, 2), (2, 1), 0),
        ((5, 3), (1, 1), (2, 1), (1, 2), 1),
        ((2, 2), (1, 1), (1, 1), (1, 1), 0),
    ]:
        shape = (2, 9, *[(k - 1) * d + 5 for k, d in zip(kernel, dilations)])
        if style == "zeros":
            x = np.where(RNG.random(shape) < 0.5, 0.0, -0.0)
            x[RNG.random(shape) < 0.1] = -1.0
            x = x.astype(dtype)
        elif dtype == np.int8:
            x = RNG.integers(-3, 3, shape).astype(dtype)
        else:
            x = _data(shape, dtype, style)
        kw = dict(strides=strides, pads=pads * 2, dilations=dilations, storage_order=order)

        def call(x=x, kernel=kernel, kw=kw):
            _core._cache.clear()
            result = ovpool.max_pool(x, kernel, **kw, return_indices=True, num_threads=threads)
            return result, [str(plan) for plan in _core.cached_plans()]

        # bands of rows too: two thirds of the padded plane in lanes
        padded = np.prod([n + 2 * p for n, p in zip(shape[2:], pads)])
        bands = {"blocked_bytes": int(padded) * (64 if dtype == np.float64 else 32) * 2 // 3}
        tuning = {"blocked_everywhere": True, "key_lanes": keys}
        (values, indices), plans = _with({**tuning, "row_windows_ratio": 0}, call)
        (whole, whole_idx), whole_plans = _with({**tuning, "row_windows_ratio": 1e30}, call)
        (banded, banded_idx), banded_plans = _with(
            {**tuning, **bands, "row_windows_ratio": 0}, call
        )
        assert all("W windows pooled once first" in p for p in plans + banded_plans), plans
        assert "bands a plane" in banded_plans[0], banded_plans
        assert not any("W windows pooled once" in p for p in whole_plans), whole_plans
        # float16 as order keys where windows have 9+ taps (a group holding a
        # NaN or a -0 is pooled as floats, by rows too)
        assert all(("order keys" in p) == (keys and np.prod(kernel) >= 9) for p in plans), plans
        width = np.dtype(dtype).itemsize
        for v, i in [(values, indices), (banded, banded_idx)]:
            assert (v.view(f"u{width}") == whole.view(f"u{width}")).all(), kernel
            np.testing.assert_array_equal(i, whole_idx)
        if order == 0:
            rank = len(kernel)
            pool = getattr(F, f"max_pool{rank}d")
            want, want_idx = pool(
                _t(x.astype(np.float64 if dtype == np.float64 else np.float32)),
                kernel,
                strides,
                pads,
                dilations,
                return_indices=True,
            )
            np.testing.assert_array_equal(values, want.numpy().astype(dtype))
            plane = int(np.prod(shape[2:]))
            base = np.arange(shape[0] * shape[1]).reshape(shape[0], shape[1], *[1] * rank)
            np.testing.assert_array_equal(indices, want_idx.numpy() + base * plane)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("style", ["ties", "specials"])
def test_strided_max_windows_on_large_planes(dtype, style):
    """Max windows at W stride 3+ on large 2D planes take the blocked kernel:
    torch's values (padding as -inf), and the bits of the row path (blocked
    kernel off), down to the sign of a zero maximum."""
    x = _data((1, 5, 113, 112), dtype, style)
    for kernel, strides, pads in [((3, 3), (3, 3), (1, 1)), ((5, 4), (2, 4), (2, 1))]:
        _core._cache.clear()
        got = ovpool.max_pool(x, kernel, strides=strides, pads=pads * 2)
        assert _paths() == {"blocked"}
        wide = _t(x.astype(np.float32))
        padded = F.pad(wide, (pads[1], pads[1], pads[0], pads[0]), value=-np.inf)
        want = F.max_pool2d(padded, kernel, strides).numpy().astype(dtype)
        np.testing.assert_array_equal(got, want)
        rows = _with(
            {"blocked_bytes": 0},
            lambda: ovpool.max_pool(x, kernel, strides=strides, pads=pads * 2),
        )
        np.testing.assert_array_equal(got, rows)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(rows))


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
@pytest.mark.parametrize("style", ["ties", "specials"])
def test_half_three_wide_maxima_at_stride_2(dtype, style):
    """16-bit 3-wide max windows at stride 2 take the blocked kernel on 2D
    planes up to 56x56 and the rows beyond: torch's values (padding as -inf)
    and the bits of the row path, down to the sign of a zero maximum."""
    if dtype == "bfloat16":
        import ml_dtypes

        dtype = ml_dtypes.bfloat16
    for size, path in [(56, "blocked"), (57, "rows")]:
        x = _data((1, 9, size, size - 1), dtype, style)
        for kernel, pads in [((3, 3), (1, 1)), ((2, 3), (0, 0))]:
            _core._cache.clear()
            got = ovpool.max_pool(x, kernel, strides=(2, 2), pads=pads * 2)
            assert _paths() == {path}
            wide = _t(x.astype(np.float32))
            padded = F.pad(wide, (pads[1], pads[1], pads[0], pads[0]), value=-np.inf)
            want = F.max_pool2d(padded, kernel, 2).numpy().astype(dtype)
            np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
            rows = _with(
                {"blocked_bytes": 0},
                lambda: ovpool.max_pool(x, kernel, strides=(2, 2), pads=pads * 2),
            )
            np.testing.assert_array_equal(got.view(np.uint16), rows.view(np.uint16))


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
@pytest.mark.parametrize("style", ["normal", "positive_ties", "minus_inf", "ties", "specials"])
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_half_max_as_order_keys(blocked, dtype, style, rank):
    """16-bit max values and indices on the blocked kernel go as order keys,
    sixteen planes a pass: the bits and indices of the float lanes (TUNING
    key_lanes off) and torch's values and indices, with 37 planes (a last
    pair of 5), ties of +0 alone (kept as keys) or with -0 and NaN (those
    pairs as floats, the others as keys), -inf values, windows wholly in
    OpenVINO's padding, both index types, OpenVINO's index axes; 1 and 2
    threads."""
    if dtype == "bfloat16":
        import ml_dtypes

        dtype = ml_dtypes.bfloat16
    shape = (2, 37) + {1: (29,), 2: (12, 7), 3: (13, 12, 7)}[rank]
    x = RNG.standard_normal(shape)
    if style == "positive_ties":
        x = np.abs(np.round(x))
    elif style == "minus_inf":
        x[RNG.random(shape) < 0.3] = -np.inf
    elif style == "ties":
        x = np.round(x)
        x[:, 20:24] = -0.0
    elif style == "specials":
        x[0, 17][RNG.random(shape[2:]) < 0.1] = np.nan
        x[RNG.random(shape) < 0.2] = -np.inf
    x = x.astype(dtype)
    # 9+ taps: indices take keys from there
    kernel = (9,) if rank == 1 else (3,) * rank
    strides, pads = (2,) * rank, (1,) * rank

    def calls():
        out = []
        for threads in (1, 2):
            out += ovpool.max_pool(
                x, kernel, strides=strides, pads=pads * 2, return_indices=True, num_threads=threads
            )
            out.append(
                ovpool.max_pool(x, kernel, strides=strides, pads=pads * 2, num_threads=threads)
            )
            for axis, index_type in [(0, "i64"), (1, "i32"), (2, "i64")]:
                out += ovpool.ov_ops.max_pool(
                    x,
                    kernel,
                    strides,
                    pads,
                    (2,) * rank,
                    rounding_type="ceil",
                    axis=axis,
                    index_element_type=index_type,
                    num_threads=threads,
                )
        return out

    new = calls()
    assert all("16-bit order keys" in repr(plan) for plan in _core.cached_plans())
    floats = _with({"key_lanes": False}, calls)
    for a, b in zip(new, floats):
        assert a.dtype == b.dtype
        if a.dtype.itemsize == 2:
            a, b = a.view(np.uint16), b.view(np.uint16)
        np.testing.assert_array_equal(a, b)
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[rank - 1]
    want, where = pool(_t(x.astype(np.float32)), kernel, strides, pads, return_indices=True)
    np.testing.assert_array_equal(new[0].astype(np.float32), want.numpy())
    if style in ("normal", "positive_ties", "minus_inf"):
        # torch counts within each plane, ONNX over the whole tensor
        plane = np.arange(2 * 37).reshape(2, 37, *(1,) * rank) * np.prod(shape[2:])
        np.testing.assert_array_equal(new[1], where.numpy() + plane)
        np.testing.assert_array_equal(new[2].view(np.uint16), new[0].view(np.uint16))


def test_half_planes_4k_apart_stay_in_float_lanes():
    """Sixteen planes a multiple of 4 KiB apart share one set of an 8-way L1
    cache in the keys' transposes: such 16-bit planes stay in float lanes
    (the blocked kernel either way), the others go as keys; torch's values."""
    for rows, keys in [(32, False), (33, True)]:
        x = _data((1, 16, rows, 64), np.float16)
        _core._cache.clear()
        got = ovpool.max_pool(x, (3, 3), strides=(2, 2))
        (plan,) = _core.cached_plans()
        assert plan.path == "blocked"
        assert ("16-bit order keys" in repr(plan)) == keys
        want = F.max_pool2d(_t(x.astype(np.float32)), 3, 2).numpy()
        np.testing.assert_array_equal(got.astype(np.float32), want)


@pytest.mark.parametrize("index_type", ["i64", "i32"])
def test_ov_index_spaces_and_storage_order(blocked, index_type):
    """OpenVINO MaxPool-8's axis (indices per plane, per batch, flat) in both
    index types and ONNX's storage_order=1, against the other paths."""
    x = _data((2, 5, 9, 11), style="ties")

    def calls():
        out = [
            ovpool.max_pool(
                x, (3, 2), strides=(2, 1), pads=(1, 0, 1, 1), return_indices=True, storage_order=1
            )[1]
        ]
        for axis in range(4):
            out.append(
                ovpool.ov_ops.max_pool(
                    x,
                    (3, 3),
                    (2, 2),
                    (1, 1),
                    (1, 1),
                    rounding_type="ceil",
                    axis=axis,
                    index_element_type=index_type,
                )[1]
            )
        return out

    new = calls()
    assert _paths() == {"blocked"}
    old = _with({"blocked_bytes": 0}, calls)
    assert new[1].dtype == (np.int32 if index_type == "i32" else np.int64)
    for a, b in zip(new, old):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("threads", [1, 2])
def test_bands_of_rows_and_threads_give_the_same_bits(threads):
    """Large planes split into bands of rows (a small blocked_bytes) and any
    thread count: the same bits as whole planes on one thread."""
    x = _data((1, 11, 37, 29), style="ties")

    def calls(n):
        return (
            ovpool.max_pool(x, (3, 3), strides=(2, 2), pads=(1,) * 4, num_threads=n),
            ovpool.avg_pool(x, (4, 3), strides=(1, 2), pads=(2, 1, 1, 1), num_threads=n),
            *ovpool.max_pool(x, (2, 4), strides=(3, 1), return_indices=True, num_threads=n),
        )

    whole = _with({"blocked_everywhere": True}, lambda: calls(1))
    banded = _with(
        {"blocked_everywhere": True, "blocked_bytes": 2048, "blocked_units": 64, "thread_ns": 1},
        lambda: calls(threads),
    )
    for a, b in zip(whole, banded):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def test_plans_explain_what_runs():
    _core._cache.clear()
    ovpool.max_pool(_data((4, 64, 7, 7)), (4, 4), strides=(2, 2))
    (plan,) = _core.cached_plans()
    text = plan.explain(2)
    assert plan.path == "blocked" and text.startswith("path blocked: float32 max")
    assert "groups of 8 planes" in text and "16 taps" in text
    assert repr(plan).startswith("<ovpool Plan path blocked")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_rows_at_strides_take_the_blocked_kernel(dtype):
    """16-bit 1D rows of up to 4096 (max values of bfloat16 and 3-wide ones:
    1024) at strides of 2+ take the blocked kernel: max values the same bits
    as the row kernel's (blocked_bytes 0) and as PyTorch's max over the
    widened input (NaN and -inf among them), float16 averages close to
    PyTorch's."""
    import ml_dtypes

    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    x = _data((2, 9, 1000), dt, style="specials")
    wide = _t(x.astype(np.float32))
    maxima = [
        (
            lambda: ovpool.max_pool(x, (5,), strides=(3,), pads=(1, 1)),
            F.max_pool1d(F.pad(wide, (1, 1), value=-np.inf), 5, 3),
        ),
        (
            lambda: ovpool.max_pool(x, (3,), strides=(2,), ceil_mode=True),
            F.max_pool1d(wide, 3, 2, ceil_mode=True),
        ),
    ]
    for call, want in maxima:
        _core._cache.clear()
        got = call()
        assert _paths() == {"blocked"}
        rows = _with({"blocked_bytes": 0}, call)
        np.testing.assert_array_equal(got.view(np.uint16), rows.view(np.uint16))
        np.testing.assert_array_equal(
            got.astype(np.float32), want.numpy().astype(dt).astype(np.float32)
        )
    if dtype == "float16":
        y = _data((2, 9, 1000), dt)
        _core._cache.clear()
        got = ovpool.avg_pool(y, (4,), strides=(2,), pads=(1, 2), count_include_pad=True)
        assert _paths() == {"blocked"}
        want = F.avg_pool1d(F.pad(_t(y.astype(np.float32)), (1, 2)), 4, 2).numpy()
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("pads", [(0, 0, 0, 0), (1, 1, 1, 1)])
def test_half_averages_at_stride_2_take_the_blocked_kernel(pads):
    """float16 3x3 s2 averages on 2D planes up to 224x224 (here 71x71, which
    the row kernel took) take the blocked kernel: close to PyTorch's
    averages of the widened input, either divisor."""
    x = _data((2, 11, 71, 71), np.float16)
    wide = _t(x.astype(np.float32))
    for cip in (False, True):
        _core._cache.clear()
        got = ovpool.avg_pool(x, (3, 3), strides=(2, 2), pads=pads, count_include_pad=cip)
        assert _paths() == {"blocked"}
        want = F.avg_pool2d(wide, 3, 2, pads[0], count_include_pad=cip).numpy()
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-3, atol=2e-3)


def test_bands_of_part_of_a_depth_stay_in_that_depth():
    """A band across two output depths reads every input row of both, so a
    3D plan whose bands hold part of a depth splits each depth's rows on its
    own (27 rows a depth here: bands of 14 and 13, two a depth, not one row
    a band), with the same values as ONNX's reference."""
    from references import onnx_pool_attrs, onnx_reference

    x = _data((1, 8, 32, 56, 56))
    _core._cache.clear()
    got = ovpool.lp_pool(x, (4, 4, 4), strides=(2, 2, 2), p=2)
    (plan,) = _core.cached_plans()
    assert "x 14 output rows (30 bands a plane)" in plan.explain(1), plan.explain(1)
    attrs = onnx_pool_attrs([4, 4, 4], strides=[2, 2, 2], p=2)
    (want,) = onnx_reference("LpPool", [x], attrs, opset=18)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_bands_of_a_prime_number_of_rows_a_depth(dtype, threads):
    """29 output rows a depth (a prime): bands of part of a depth end at the
    depth's last row, whatever their size, and values and indices match
    PyTorch's (max over a -inf padded input, exact in float32)."""
    x = _data((1, 11, 7, 56, 13), dtype, style="ties")
    kernel, strides, pads = (3, 3, 3), (2, 2, 2), (1,) * 6

    def calls():
        return (
            ovpool.max_pool(
                x, kernel, strides=strides, pads=pads, ceil_mode=True, num_threads=threads
            ),
            *ovpool.max_pool(
                x, kernel, strides=strides, pads=pads, return_indices=True, num_threads=threads
            ),
        )

    got = _with({"blocked_bytes": 8 * 4 * 3 * 9 * 15, "blocked_units": 64, "thread_ns": 1}, calls)
    wide = _t(x.astype(np.float32))
    ceil = F.max_pool3d(wide, kernel, strides, padding=1, ceil_mode=True).numpy()
    values, indices = F.max_pool3d(wide, kernel, strides, padding=1, return_indices=True)
    assert ceil.shape[3] == 29
    np.testing.assert_array_equal(got[0], ceil.astype(dtype))
    np.testing.assert_array_equal(got[1], values.numpy().astype(dtype))
    planes = np.arange(11).reshape(1, 11, 1, 1, 1) * x[0, 0].size  # ONNX counts over N x C too
    np.testing.assert_array_equal(got[2], indices.numpy() + planes)


def test_small_calls_run_on_the_calling_thread():
    """The core's cost model: a small call gets one thread whatever the
    caller allows; a large one gets more."""
    _core._cache.clear()
    ovpool.avg_pool(_data((1, 2, 8, 8)), (2, 2))
    ovpool.avg_pool(_data((8, 64, 64, 64)), (2, 2))
    small, large = sorted(_core.cached_plans(), key=lambda p: p.cost_ns)
    assert small.threads(8) == 1
    assert "1 thread," in small.explain(8)
    assert large.threads(2) == 2 and large.threads(1) == 1


@pytest.mark.parametrize(
    "kernel, strides, pads, redo_values, redo_indices",
    [
        # every window inside the input: neither is redone
        ((2, 2), (1, 1), (0, 0), False, False),
        # windows reach the padding: only indices (a -inf pad could come first)
        ((3, 3), (3, 3), (1, 1), False, True),
    ],
)
def test_minus_inf_maxima_redone_only_where_the_padding_could_answer(
    blocked, kernel, strides, pads, redo_values, redo_indices
):
    """Windows of -inf values only: the padded layout gives max values
    PyTorch's -inf and indices PyTorch's first element of the window, so the
    plan scans for -inf maxima only where the padding could answer instead
    (indices of windows reaching the padding; windows of padding only, below).
    """
    x = _data((2, 19, 14, 13))
    x[0, :7] = -np.inf  # whole planes, one group
    x[1, 3:11, 4:, :6] = -np.inf  # part of two groups, some windows only
    _core._cache.clear()
    values = ovpool.max_pool(x, kernel, strides=strides, pads=pads * 2)
    both = ovpool.max_pool(x, kernel, strides=strides, pads=pads * 2, return_indices=True)
    texts = {"indices" in repr(p): p.explain(1) for p in _core.cached_plans()}
    assert ("a -inf maximum redone" in texts[False]) == redo_values
    assert ("a -inf maximum redone" in texts[True]) == redo_indices
    want, where = F.max_pool2d(_t(x), kernel, strides, pads, return_indices=True)
    np.testing.assert_array_equal(values, want.numpy())
    np.testing.assert_array_equal(both[0], want.numpy())
    plane = np.arange(2 * 19).reshape(2, 19, 1, 1) * 14 * 13
    np.testing.assert_array_equal(both[1], where.numpy() + plane)


def test_windows_of_padding_only_are_redone(blocked):
    """OpenVINO's ceil rounding leaves windows of padding only: their plans
    redo -inf maxima, which give OpenVINO's lowest float32 (values) and the
    plane's first index, beside -inf values that stay -inf."""
    x = _data((1, 11, 5, 5))
    x[0, :4] = -np.inf
    _core._cache.clear()
    values, indices = ovpool.ov_ops.max_pool(
        x, (2, 2), (2, 2), (1, 1), (1, 1), rounding_type="ceil"
    )
    (plan,) = _core.cached_plans()
    assert "a -inf maximum redone" in plan.explain(1)
    lowest = np.finfo(np.float32).min
    assert (values[0, :, 3, :] == lowest).all() and (values[0, :, :, 3] == lowest).all()
    assert (values[0, :4, :3, :3] == -np.inf).all()
    padded = F.pad(_t(x), (1, 1, 1, 1), value=-np.inf)
    inner = F.max_pool2d(padded, 2, 2).numpy()[..., :3, :3]
    np.testing.assert_array_equal(values[..., :3, :3], inner)
    # OpenVINO counts over the whole tensor (axis 0): each plane's first index
    first = np.arange(11).reshape(11, 1) * 25
    assert (indices[0, :, 3, :] == first).all() and (indices[0, :, :, 3] == first).all()


def test_large_outputs_are_prefetched_for_writing():
    """Calls writing 3 MiB or more (Tuning::blocked_prefetch_out_bytes)
    prefetch each group's outputs (and indices) as the input is transposed;
    the outputs are the same bits either way (the threshold lowered to 0 and
    raised past the call)."""
    x = _data((4, 768, 17, 17), style="specials")

    def calls():
        _core._cache.clear()
        out = [ovpool.max_pool(x, (2, 2), strides=(1, 1), num_threads=t) for t in (1, 2)]
        out += ovpool.max_pool(x, (3, 3), strides=(2, 2), pads=(1,) * 4, return_indices=True)
        out.append(ovpool.avg_pool(x, (3, 3), strides=(2, 2), pads=(1,) * 4))
        return out, [p.explain(1) for p in _core.cached_plans()]

    on, texts = _with({"blocked_prefetch_out_bytes": 0}, calls)
    assert all("prefetched for writing" in t for t in texts)
    assert any("outputs and indices prefetched" in t for t in texts)
    off, texts = _with({"blocked_prefetch_out_bytes": 1 << 40}, calls)
    assert not any("prefetched for writing" in t for t in texts)
    for a, b in zip(on, off):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
    _core._cache.clear()
    ovpool.max_pool(x, (2, 2), strides=(1, 1))  # 3.5 MiB out: the default prefetches
    assert "prefetched for writing" in _core.cached_plans()[0].explain(1)
    want = F.max_pool2d(_t(x), 2, 1).numpy()
    np.testing.assert_array_equal(on[0], want)
    np.testing.assert_array_equal(on[1], want)


def test_long_planes_prefetch_the_heads_of_the_next_group():
    """Planes of 8 KiB or more (Tuning::blocked_prefetch_head_bytes) prefetch
    only the first cache lines of each of the next group's planes (at most
    the plane's own lines); the outputs are the same bits as with the whole
    group prefetched, and match PyTorch."""
    x = _data((2, 67, 48, 48), style="specials")  # 17 groups: one band a plane
    x3 = _data((1, 131, 5, 24, 24))

    def calls():
        _core._cache.clear()
        out = [
            ovpool.max_pool(x, (3, 3), strides=(3, 3), pads=(1,) * 4, num_threads=t) for t in (1, 2)
        ]
        out += ovpool.max_pool(x, (2, 3), strides=(2, 2), return_indices=True)
        out.append(ovpool.avg_pool(x, (3, 3), strides=(2, 2), pads=(1,) * 4))
        out.append(ovpool.lp_pool(x, (2, 2), strides=(2, 2), p=2))
        out.append(ovpool.max_pool(x3, (2, 2, 2), strides=(2, 2, 2)))
        return out, [p.explain(1) for p in _core.cached_plans() if p.path == "blocked"]

    everywhere = {"blocked_everywhere": True}
    head, texts = _with(everywhere, calls)
    assert len(texts) == 5
    assert all("planes prefetched by their first 8 cache lines" in t for t in texts)
    whole, texts = _with({**everywhere, "blocked_prefetch_head_bytes": 1 << 40}, calls)
    assert not any("planes prefetched by their first" in t for t in texts)
    many, texts = _with(
        {**everywhere, "blocked_prefetch_head_bytes": 0, "blocked_prefetch_head_lines": 10**6},
        calls,
    )
    # a 48x48 float32 plane is 144 cache lines, a 5x24x24 one 180
    assert sum("by their first 144 cache lines" in t for t in texts) == 4
    assert sum("by their first 180 cache lines" in t for t in texts) == 1
    for a, b, c in zip(head, whole, many):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
        np.testing.assert_array_equal(a.view(np.uint8), c.view(np.uint8))
    want = F.max_pool2d(_t(x), 3, 3, 1).numpy()
    np.testing.assert_array_equal(head[0], want)
    np.testing.assert_array_equal(head[1], want)
    values, where = F.max_pool2d(_t(x), (2, 3), 2, return_indices=True)
    np.testing.assert_array_equal(head[2], values.numpy())
    np.testing.assert_array_equal(
        head[3], where.numpy() + np.arange(134).reshape(2, 67, 1, 1) * 48 * 48
    )
    np.testing.assert_allclose(
        head[4], F.avg_pool2d(_t(x), 3, 2, 1, count_include_pad=False).numpy(), rtol=1e-6, atol=1e-6
    )
    lp = torch.sqrt(F.avg_pool2d(_t(x) ** 2, 2, 2) * 4).numpy()
    np.testing.assert_allclose(head[5], lp, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(head[6], F.max_pool3d(_t(x3), 2, 2).numpy())
