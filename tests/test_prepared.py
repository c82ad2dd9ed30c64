"""Prepared pools (ovpool.prepare, ovpool.Pool) and the cache of the numpy
functions' per-call path: the same values as PyTorch and the ONNX reference,
the checks a call still makes, the keys that must not share a pool, and one
pool called from several threads at once."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ovpool
from ovpool import _core, ov_ops

torch = pytest.importorskip("torch")
F = torch.nn.functional


@pytest.fixture
def x(rng):
    return rng.standard_normal((2, 5, 9, 11)).astype(np.float32)


CASES = [
    # (ovpool function, its arguments after x, the PyTorch reference)
    (
        ovpool.max_pool,
        ((3, 3),),
        {"strides": 2, "pads": (1, 1, 1, 1)},
        lambda t: F.max_pool2d(t, 3, 2, 1),
    ),
    (
        ovpool.avg_pool,
        ((2, 3),),
        {"strides": (2, 1), "ceil_mode": True},
        lambda t: F.avg_pool2d(t, (2, 3), (2, 1), ceil_mode=True, count_include_pad=False),
    ),
    (ovpool.adaptive_avg_pool, ((4, 5),), {}, lambda t: F.adaptive_avg_pool2d(t, (4, 5))),
    (ovpool.global_max_pool, (), {}, lambda t: F.adaptive_max_pool2d(t, 1)),
    (ovpool.lp_pool, ((2, 2),), {"p": 2, "strides": 2}, lambda t: F.lp_pool2d(t, 2, 2, 2)),
]


@pytest.mark.parametrize(
    "function, args, kwargs, reference", CASES, ids=[c[0].__name__ for c in CASES]
)
def test_pool_computes_what_the_function_and_torch_compute(x, function, args, kwargs, reference):
    pool = ovpool.prepare(function, x.shape, x.dtype, *args, **kwargs)
    expected = reference(torch.from_numpy(x)).numpy()
    got = pool(x)
    assert got.shape == pool.out_shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(got, function(x, *args, **kwargs))
    out = np.empty(pool.out_shape, np.float32)
    assert pool(x, out=out) is out
    np.testing.assert_array_equal(out, got)


def test_pool_with_indices_matches_torch_and_fills_both_buffers(x):
    pool = ovpool.prepare(ovpool.adaptive_max_pool, x.shape, x.dtype, (3, 4), index_dtype=np.int32)
    assert pool.index_dtype == np.int32
    values, indices = pool(x)
    ref_values, ref_indices = F.adaptive_max_pool2d(
        torch.from_numpy(x), (3, 4), return_indices=True
    )
    np.testing.assert_array_equal(values, ref_values.numpy())
    np.testing.assert_array_equal(indices, ref_indices.numpy())
    v, i = np.empty_like(values), np.empty_like(indices)
    got_v, got_i = pool(x, out=v, out_indices=i)
    assert got_v is v and got_i is i
    np.testing.assert_array_equal(v, values)
    np.testing.assert_array_equal(i, indices)


def test_openvino_semantics_pool(x):
    # OpenVINO's MaxPool-8 with axis 2: indices within each plane, as torch's
    pool = ovpool.prepare(
        ov_ops.max_pool,
        x.shape,
        x.dtype,
        [2, 2],
        [2, 2],
        [0, 0],
        [1, 1],
        rounding_type="ceil",
        axis=2,
    )
    values, indices = pool(x)
    ref_values, ref_indices = F.max_pool2d(
        torch.from_numpy(x), 2, 2, padding=0, ceil_mode=True, return_indices=True
    )
    np.testing.assert_array_equal(values, ref_values.numpy())
    np.testing.assert_array_equal(indices, ref_indices.numpy())


def test_a_call_checks_its_array(x):
    pool = ovpool.prepare(ovpool.max_pool, x.shape, x.dtype, 2)
    prepared_for = r"max_pool: this pool was prepared for x of shape \(2, 5, 9, 11\) and dtype"
    with pytest.raises(ovpool.OvpoolValueError, match=prepared_for):
        pool(x[:1])
    with pytest.raises(ovpool.OvpoolValueError, match="prepared for"):
        pool(x.astype(np.float64))
    with pytest.raises(ovpool.OvpoolValueError, match="out must have shape"):
        pool(x, out=np.empty((1, 1, 1, 1), np.float32))
    with pytest.raises(ovpool.OvpoolValueError, match="out must not overlap the input"):
        pool(x, out=x.reshape(-1)[:800].reshape(pool.out_shape))
    # a strided or byte-swapped x of the right shape and dtype is copied, as the functions do
    wide = np.empty((2, 5, 9, 22), np.float32)
    wide[..., ::2] = x
    np.testing.assert_array_equal(pool(wide[..., ::2]), pool(x))
    np.testing.assert_array_equal(pool(x.astype(">f4")), pool(x))


def test_prepare_refuses_as_the_function_refuses(x):
    for call in (
        lambda f: f(x, (3, 3, 3)),
        lambda f: ovpool.prepare(f, x.shape, x.dtype, (3, 3, 3)),
    ):
        with pytest.raises(
            ovpool.OvpoolValueError,
            match=r"^max_pool: kernel_shape must have 2 entries for 2 spatial "
            r"dims, got 3: \[3, 3, 3\]",
        ):
            call(ovpool.max_pool)
    with pytest.raises(ovpool.OvpoolTypeError, match="pooling function"):
        ovpool.prepare(np.add, x.shape, x.dtype)
    with pytest.raises(ovpool.OvpoolTypeError, match="out is an argument of each call"):
        ovpool.prepare(ovpool.max_pool, x.shape, x.dtype, 2, out=np.empty(1))
    with pytest.raises(ovpool.OvpoolTypeError, match="unsupported dtype int32"):
        ovpool.prepare(ovpool.avg_pool, x.shape, np.int32, 2)


def test_prepared_threads(x):
    pool = ovpool.prepare(ovpool.max_pool, (64, 256, 64, 64), np.float32, 2, num_threads=1)
    assert pool.num_threads == 1 and pool.threads() == 1
    small = ovpool.prepare(ovpool.max_pool, x.shape, x.dtype, 2)
    assert small.threads() == 1  # a small call stays on the calling thread
    # repr shows the plan as the pool's calls run it: their thread count
    two = ovpool.prepare(ovpool.max_pool, (64, 256, 64, 64), np.float32, 2, num_threads=2)
    for p in (pool, small, two):
        n = p.threads()
        assert f" {n} thread{'s' if n > 1 else ''}, " in repr(p), repr(p)


def test_keys_that_look_alike_do_not_share_a_pool(x):
    _core._cache.clear()
    a = ovpool.max_pool(x, 2, strides=2)
    b = ovpool.max_pool(x, [2, 2], strides=(2, 2))
    np.testing.assert_array_equal(a, b)
    assert ovpool.max_pool(x, 2, ceil_mode=True).shape == (2, 5, 8, 10)
    # 2.0 is no size, True no storage order: refused, never a cached pool of 2 or 1
    with pytest.raises(ovpool.OvpoolTypeError):
        ovpool.max_pool(x, 2.0)
    with pytest.raises(ovpool.OvpoolValueError):
        ovpool.max_pool(x, 2, storage_order=True)
    # the same attributes on another shape or dtype: another pool
    y = x[:1].copy()
    assert ovpool.max_pool(y, 2).shape == (1, 5, 8, 10)
    assert ovpool.max_pool(x.astype(np.float64), 2).dtype == np.float64
    # an index dtype by numpy type, dtype and name: one result each
    for index_dtype in (np.int32, np.dtype(np.int32), "i32", "int32"):
        assert ovpool.adaptive_max_pool(x, 3, index_dtype=index_dtype)[1].dtype == np.int32
    assert len(_core._cache) >= 6


def test_the_cache_keeps_its_size(x):
    _core._cache.clear()
    for n in range(1, 300):
        ovpool.global_avg_pool(np.ones((1, 1, n), np.float32))
    assert len(_core._cache) == 256
    np.testing.assert_array_equal(ovpool.global_avg_pool(np.ones((1, 1, 5), np.float32)), 1)
    _core._cache.clear()
    assert len(_core._cache) == 0


def test_one_pool_from_several_threads(rng):
    """One pool called from 8 Python threads at once: every call gives the
    values a call made alone gives (each call has its own outputs and
    scratch; the large calls run OpenMP threads with the GIL released)."""
    shape = (4, 32, 40, 40)
    pool = ovpool.prepare(
        ovpool.max_pool,
        shape,
        np.float32,
        (3, 3),
        strides=2,
        pads=(1, 1, 1, 1),
        return_indices=True,
    )
    inputs = [rng.standard_normal(shape).astype(np.float32) for _ in range(8)]
    expected = [pool(x) for x in inputs]
    failures = []

    def work(k):
        for _ in range(20):
            values, indices = pool(inputs[k])
            if not (
                np.array_equal(values, expected[k][0]) and np.array_equal(indices, expected[k][1])
            ):
                failures.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    ref_values, ref_indices = F.max_pool2d(
        torch.from_numpy(inputs[0]), 3, 2, 1, return_indices=True
    )
    np.testing.assert_array_equal(expected[0][0], ref_values.numpy())
    # ONNX indices are flat over the whole tensor; torch's within each plane
    np.testing.assert_array_equal(expected[0][1] % (40 * 40), ref_indices.numpy())


# --------------------------------------------------------------------------
# pickling: a pool sent to a worker process
# --------------------------------------------------------------------------

PICKLED = [
    # (function, arguments after x, keyword arguments, dtype)
    (ovpool.max_pool, ((3, 3),), {"strides": 2, "pads": (1, 1, 1, 1), "return_indices": True}),
    (ovpool.avg_pool, ((2, 3),), {"strides": (2, 1), "ceil_mode": True}),
    (ovpool.adaptive_max_pool, ((4, 5),), {"index_dtype": np.int32}),
    (ov_ops.avg_pool, ((3, 3), 2, 1, 1), {"exclude_pad": False, "rounding_type": "ceil"}),
    (ov_ops.max_pool, ((2, 2), 2), {"axis": 2, "index_element_type": "i32"}),
    (ovpool.global_lp_pool, (), {"p": 3}),
]


def _bits(result):
    arrays = result if isinstance(result, tuple) else (result,)
    return [(a.dtype, a.shape, a.tobytes()) for a in arrays]


@pytest.mark.parametrize(
    "function, args, kwargs", PICKLED, ids=[f"{c[0].__module__}.{c[0].__name__}" for c in PICKLED]
)
def test_a_pool_pickles_as_what_it_was_prepared_from(x, function, args, kwargs):
    import pickle

    pool = ovpool.prepare(function, x.shape, x.dtype, *args, num_threads=1, **kwargs)
    loaded = pickle.loads(pickle.dumps(pool))
    assert loaded is not pool and isinstance(loaded, ovpool.Pool)
    assert (loaded.op, loaded.shape, loaded.dtype, loaded.out_shape, loaded.index_dtype) == (
        pool.op,
        pool.shape,
        pool.dtype,
        pool.out_shape,
        pool.index_dtype,
    )
    assert loaded.num_threads == 1 and repr(loaded) == repr(pool)
    assert _bits(loaded(x)) == _bits(pool(x)) == _bits(function(x, *args, **kwargs))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_pool_works_in_a_worker_process(rng, method):
    """A pool shipped to concurrent.futures workers (each start method) is
    prepared again there and gives the bits the parent's pool gives; bf16
    and int8 inputs too."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = rng.standard_normal((2, 6, 17, 13)).astype(np.float32)
    x[0, 0, 3, 4] = np.nan
    int8 = (np.nan_to_num(x) * 40).clip(-128, 127).astype(np.int8)
    inputs = [x, x.astype(ml_dtypes.bfloat16), int8]
    pools = [
        ovpool.prepare(
            ovpool.max_pool, a.shape, a.dtype, 3, strides=2, pads=(1, 1, 1, 1), return_indices=True
        )
        for a in inputs
    ] + [ovpool.prepare(ovpool.avg_pool, x.shape, x.dtype, 3, count_include_pad=True)]
    inputs.append(x)
    pools.append(ovpool.prepare(ov_ops.max_pool, x.shape, x.dtype, 2, 2, num_threads=2))
    inputs.append(x)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context(method)) as executor:
        results = [executor.submit(pool, a) for pool, a in zip(pools, inputs)]
        threads = executor.submit(getattr, pools[-1], "num_threads")
        for pool, a, result in zip(pools, inputs, results):
            assert _bits(result.result(timeout=300)) == _bits(pool(a))
        assert threads.result(timeout=300) == 2


def test_only_a_prepared_pool_pickles(x):
    import pickle

    _core._cache.clear()
    ovpool.max_pool(x, 2)
    (cached,) = _core._cache.values()  # the numpy function's own pool: not prepared
    with pytest.raises(TypeError, match=r"not made by ovpool\.prepare"):
        pickle.dumps(cached)
