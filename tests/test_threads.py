"""Threads: identical results for 1 and 2 threads, an OpenMP build, thread
counts honoured even after another library lowered the OpenMP default.

Tests that change process-wide OpenMP or ovpool settings run in a subprocess
so nothing leaks into other tests.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ovpool
from ovpool import _kernels, ov_ops

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_python(code, env_updates=None, env_remove=()):
    """Run ``code`` in a fresh interpreter from the repository root; return stdout."""
    env = dict(os.environ)
    for name in env_remove:
        env.pop(name, None)
    env.update(env_updates or {})
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


# --------------------------------------------------------------------------
# 1 thread vs 2 threads
# --------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _inputs():
    rng = np.random.default_rng(2)
    many_planes = rng.standard_normal((4, 16, 48, 40)).astype(np.float32)  # 123k
    one_plane = rng.standard_normal((1, 1, 400, 300)).astype(np.float32)  # 120k
    volume = rng.standard_normal((2, 3, 24, 40, 36)).astype(np.float64)  # 207k
    signal = rng.standard_normal((1, 2, 160001)).astype(np.float32)  # 320k
    with_nan = many_planes.copy()
    with_nan[rng.random(with_nan.shape) < 0.01] = np.nan
    ties = np.round(one_plane).astype(np.float32)
    int8 = rng.integers(-128, 128, size=(2, 8, 90, 80)).astype(np.int8)  # 115k
    return {
        "many_planes": many_planes,
        "one_plane": one_plane,
        "volume": volume,
        "signal": signal,
        "with_nan": with_nan,
        "ties": ties,
        "int8": int8,
    }


def _k(x, k):
    return (k,) * (x.ndim - 2)


OPS = {
    "avg_pool": lambda x, n: ovpool.avg_pool(
        x,
        _k(x, 3),
        strides=_k(x, 2),
        pads=_k(x, 1) * 2,
        ceil_mode=True,
        count_include_pad=True,
        num_threads=n,
    ),
    "avg_pool_dilated": lambda x, n: ovpool.avg_pool(
        x, _k(x, 2), dilations=_k(x, 2), num_threads=n
    ),
    "max_pool": lambda x, n: ovpool.max_pool(
        x, _k(x, 3), strides=_k(x, 2), pads=_k(x, 1) * 2, num_threads=n
    ),
    "max_pool_indices": lambda x, n: ovpool.max_pool(
        x, _k(x, 3), strides=_k(x, 1), dilations=_k(x, 2), return_indices=True, num_threads=n
    ),
    "max_pool_column_major": lambda x, n: ovpool.max_pool(
        x, _k(x, 2), strides=_k(x, 2), storage_order=1, return_indices=True, num_threads=n
    ),
    "lp_pool_p2": lambda x, n: ovpool.lp_pool(
        x, _k(x, 3), auto_pad="SAME_UPPER", p=2, num_threads=n
    ),
    "lp_pool_p3": lambda x, n: ovpool.lp_pool(x, _k(x, 2), strides=_k(x, 2), p=3, num_threads=n),
    "adaptive_avg_pool": lambda x, n: ovpool.adaptive_avg_pool(x, _k(x, 7), num_threads=n),
    "adaptive_max_pool_i64": lambda x, n: ovpool.adaptive_max_pool(x, _k(x, 9), num_threads=n),
    "adaptive_max_pool_i32": lambda x, n: ovpool.adaptive_max_pool(
        x, _k(x, 5), index_dtype=np.int32, num_threads=n
    ),
    "global_avg_pool": lambda x, n: ovpool.global_avg_pool(x, num_threads=n),
    "global_max_pool": lambda x, n: ovpool.global_max_pool(x, num_threads=n),
    "global_lp_pool": lambda x, n: ovpool.global_lp_pool(x, p=3, num_threads=n),
    "ov_avg_pool_ceil": lambda x, n: ov_ops.avg_pool(
        x,
        _k(x, 3),
        _k(x, 2),
        _k(x, 1),
        _k(x, 1),
        exclude_pad=False,
        rounding_type="ceil",
        num_threads=n,
    ),
    "ov_max_pool_axis1": lambda x, n: ov_ops.max_pool(
        x, _k(x, 2), _k(x, 2), _k(x, 0), _k(x, 1), rounding_type="ceil", axis=1, num_threads=n
    ),
}

FLOAT_ONLY = {
    "avg_pool",
    "avg_pool_dilated",
    "lp_pool_p2",
    "lp_pool_p3",
    "adaptive_avg_pool",
    "global_avg_pool",
    "global_lp_pool",
    "ov_avg_pool_ceil",
}


CASES = [
    (op, data) for data in _inputs() for op in OPS if not (data == "int8" and op in FLOAT_ONLY)
]  # average and Lp pools are float-only


@pytest.mark.skipif(not ovpool.openmp_enabled(), reason="built without OpenMP")
@pytest.mark.parametrize("op, data", CASES, ids=[f"{op}-{data}" for op, data in CASES])
def test_one_and_two_threads_give_bit_identical_results(op, data):
    x = _inputs()[data]
    assert x.size >= 100_000
    one = OPS[op](x, 1)
    two = OPS[op](x, 2)
    one = one if isinstance(one, tuple) else (one,)
    two = two if isinstance(two, tuple) else (two,)
    for a, b in zip(one, two):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)  # NaN in the same places, bits equal elsewhere
        if a.dtype.kind == "f":
            assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


def test_max_unpool_results_do_not_depend_on_num_threads_default():
    """MaxUnpool is serial by design (duplicate indices must resolve the same
    way); its result must not change with the process-wide thread setting."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 8, 100, 80)).astype(np.float32)
    values, indices = ovpool.max_pool(x, (2, 2), strides=(2, 2), return_indices=True)
    previous = ovpool.get_num_threads()
    try:
        ovpool.set_num_threads(1)
        a = ovpool.max_unpool(values, indices, (2, 2), strides=(2, 2))
        ovpool.set_num_threads(2)
        b = ovpool.max_unpool(values, indices, (2, 2), strides=(2, 2))
    finally:
        ovpool.set_num_threads(None)
    assert ovpool.get_num_threads() == previous
    np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------
# the build and the team size
# --------------------------------------------------------------------------


@pytest.mark.skipif(
    os.environ.get("OVPOOL_SKIP_OPENMP_TEST", "") == "1", reason="OVPOOL_SKIP_OPENMP_TEST=1"
)
def test_openmp_parallelism_enabled():
    """The build must have OpenMP (set OVPOOL_SKIP_OPENMP_TEST=1 where a serial
    build is intended, e.g. a compiler without OpenMP)."""
    assert ovpool.openmp_enabled(), (
        "ovpool was built without OpenMP: the kernels run on one thread. Rebuild with a "
        "compiler that supports -fopenmp, or set OVPOOL_SKIP_OPENMP_TEST=1."
    )


def test_parallel_region_gets_the_requested_team_size():
    """Both ``ovpool._kernels`` (the baseline build) and the build the ops
    dispatch to (``ovpool._isa.kernels``, x86-64-v3 where the CPU has it)."""
    from ovpool import _isa

    for module in (_kernels, _isa.kernels):
        if ovpool.openmp_enabled():
            assert module.parallel_team_size(2) == 2
            assert module.parallel_team_size(1) == 1
            assert module.parallel_team_size(3) == 3  # oversubscription is honoured too
        else:  # a serial build runs everything on one thread
            assert module.parallel_team_size(2) == 1
            assert ovpool.get_num_threads() == 1


@pytest.mark.skipif(not ovpool.openmp_enabled(), reason="built without OpenMP")
@pytest.mark.parametrize("order", ["torch_first", "ovpool_first"])
def test_torch_set_num_threads_1_does_not_pin_ovpool_to_one_thread(order):
    """PyTorch ships its own libgomp with the same soname; torch.set_num_threads(1)
    lowers the OpenMP default of the whole process. ovpool passes num_threads
    explicitly, so its team is still 2. (Subprocess: the torch setting is global.)"""
    pytest.importorskip("torch")
    imports = (
        "import torch\nimport ovpool" if order == "torch_first" else "import ovpool\nimport torch"
    )
    out = _run_python(
        f"""
        {imports.splitlines()[0]}
        {imports.splitlines()[1]}
        import numpy as np
        from ovpool import _kernels
        import ctypes
        torch.set_num_threads(1)
        assert torch.get_num_threads() == 1
        # the process-wide OpenMP default really is 1 now (so this test means something)
        print(ctypes.CDLL("libgomp.so.1").omp_get_max_threads())
        from ovpool import _isa
        print(min(_kernels.parallel_team_size(2), _isa.kernels.parallel_team_size(2)))
        x = np.random.default_rng(0).standard_normal((4, 16, 64, 64)).astype(np.float32)
        a = ovpool.avg_pool(x, (3, 3), num_threads=2)
        b = ovpool.avg_pool(x, (3, 3), num_threads=1)
        print(int(np.array_equal(a, b)))
        print(ovpool.get_num_threads())
    """,
        env_remove=["OVPOOL_NUM_THREADS", "OMP_NUM_THREADS"],
    )
    openmp_default, team, identical, default = out.split()
    assert openmp_default == "1"
    assert team == "2"
    assert identical == "1"
    assert int(default) == ovpool._threads.available_cpus()


@pytest.mark.skipif(not ovpool.openmp_enabled(), reason="built without OpenMP")
@pytest.mark.parametrize("user_api", [None, "openmp"])
def test_threadpoolctl_limits_ovpool(user_api):
    """ovpool registers with threadpoolctl as an OpenMP library:
    threadpool_limits(1) (for every library, or for user_api="openmp") lowers
    the default thread count of ovpool's calls, restored afterwards, and
    threadpool_info lists ovpool's driver. An explicit num_threads still
    wins inside the block. (Subprocess: threadpoolctl's limits are global.)"""
    pytest.importorskip("threadpoolctl")
    out = _run_python(
        f"""
        import numpy as np, threadpoolctl, ovpool
        big = ovpool.prepare(ovpool.global_avg_pool, (1024, 1024, 64, 64), "float32")
        info = [i for i in threadpoolctl.threadpool_info() if i["internal_api"] == "ovpool"]
        print(len(info), info[0]["user_api"], info[0]["num_threads"])
        before = ovpool.get_num_threads()
        with threadpoolctl.threadpool_limits(limits=1, user_api={user_api!r}):
            print(ovpool.get_num_threads(), big.threads(),
                  big.threads(2))
            x = np.random.default_rng(0).standard_normal((4, 16, 64, 64)).astype(np.float32)
            inside = ovpool.avg_pool(x, (3, 3))
        print(ovpool.get_num_threads() == before, before)
        print(int(np.array_equal(inside, ovpool.avg_pool(x, (3, 3), num_threads=2))))
    """,
        env_remove=["OVPOOL_NUM_THREADS", "OMP_NUM_THREADS"],
    )
    lines = out.splitlines()
    cpus = ovpool._threads.available_cpus()
    assert lines[0] == f"1 openmp {cpus}"
    assert lines[1] == f"1 1 {min(2, cpus)}"
    assert lines[2] == f"True {cpus}"
    assert lines[3] == "1"


@pytest.mark.skipif(not ovpool.openmp_enabled(), reason="built without OpenMP")
@pytest.mark.parametrize(
    "omp, ovpool_env, expected",
    [
        ("1", None, 1),
        ("2", None, 2),
        ("3,1", None, 3),  # nested regions: the first entry
        ("junk", None, None),  # ignored, as the OpenMP runtime ignores it: the CPUs
        ("1", "2", 2),  # OVPOOL_NUM_THREADS wins over OMP_NUM_THREADS
    ],
)
def test_omp_num_threads_is_honoured(omp, ovpool_env, expected):
    """OMP_NUM_THREADS sets the default, after OVPOOL_NUM_THREADS and
    set_num_threads (scikit-learn's order); every count is capped to the
    CPUs this process may run on."""
    env = {"OMP_NUM_THREADS": omp}
    if ovpool_env is not None:
        env["OVPOOL_NUM_THREADS"] = ovpool_env
    out = _run_python(
        """
        import ovpool
        print(ovpool.get_num_threads())
        ovpool.set_num_threads(1)            # set_num_threads wins over both variables
        print(ovpool.get_num_threads())
    """,
        env_updates=env,
        env_remove=[] if ovpool_env else ["OVPOOL_NUM_THREADS"],
    )
    cpus = ovpool._threads.available_cpus()
    want = cpus if expected is None else min(expected, cpus)
    assert out.split() == [str(want), "1"]


@pytest.mark.skipif(not ovpool.openmp_enabled(), reason="built without OpenMP")
def test_thread_counts_are_capped_to_the_available_cpus():
    """A thread count the system cannot give is never passed to the OpenMP
    runtime (which would abort the process): num_threads=10**6 runs, on at
    most the available CPUs, with the serial results."""
    big = ovpool.prepare(ovpool.global_avg_pool, (1024, 1024, 64, 64), "float32")
    cpus = ovpool._threads.available_cpus()
    assert big.threads(10**6) == cpus
    x = np.random.default_rng(3).standard_normal((2, 8, 40, 40)).astype(np.float32)
    np.testing.assert_array_equal(
        ovpool.max_pool(x, (3, 3), num_threads=10**6), ovpool.max_pool(x, (3, 3), num_threads=1)
    )
    out = _run_python("""
        import ovpool
        ovpool.set_num_threads(10 ** 6)
        print(ovpool.get_num_threads())
    """)
    assert out.split() == [str(cpus)]


# --------------------------------------------------------------------------
# set_num_threads / get_num_threads / OVPOOL_NUM_THREADS
# --------------------------------------------------------------------------


@pytest.mark.skipif(not ovpool.openmp_enabled(), reason="built without OpenMP")
def test_set_and_get_num_threads():
    out = _run_python(
        """
        import ovpool
        big = ovpool.prepare(ovpool.global_avg_pool, (1024, 1024, 64, 64), "float32")
        print(ovpool.get_num_threads())
        ovpool.set_num_threads(1)
        print(ovpool.get_num_threads(), big.threads())
        ovpool.set_num_threads(3)
        print(ovpool.get_num_threads(), big.threads())
        print(big.threads(2))     # the call's argument wins
        ovpool.set_num_threads(None)
        print(ovpool.get_num_threads())
    """,
        env_remove=["OVPOOL_NUM_THREADS", "OMP_NUM_THREADS"],
    )
    lines = out.splitlines()
    cpus = ovpool._threads.available_cpus()
    three = min(3, cpus)
    assert lines == [str(cpus), "1 1", f"{three} {three}", str(min(2, cpus)), str(cpus)]


@pytest.mark.skipif(not ovpool.openmp_enabled(), reason="built without OpenMP")
@pytest.mark.parametrize("value", ["1", "2", "5"])
def test_ovpool_num_threads_environment_variable_is_honoured(value):
    out = _run_python(
        """
        import ovpool
        big = ovpool.prepare(ovpool.global_avg_pool, (1024, 1024, 64, 64), "float32")
        print(ovpool.get_num_threads(), big.threads())
        ovpool.set_num_threads(2)               # set_num_threads wins over the env var
        print(ovpool.get_num_threads())
    """,
        env_updates={"OVPOOL_NUM_THREADS": value},
    )
    lines = out.splitlines()
    n = min(int(value), ovpool._threads.available_cpus())
    assert lines == [f"{n} {n}", str(min(2, ovpool._threads.available_cpus()))]


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_bad_ovpool_num_threads_environment_variable_raises(value):
    out = _run_python(
        """
        import numpy as np, ovpool
        try:
            ovpool.avg_pool(np.zeros((1, 1, 4), np.float32), (2,))
        except ovpool.OvpoolError as exc:
            print(isinstance(exc, ValueError), "OVPOOL_NUM_THREADS" in str(exc))
        else:
            print("no error")
    """,
        env_updates={"OVPOOL_NUM_THREADS": value},
    )
    if not ovpool.openmp_enabled():
        assert out.strip() == "no error"  # without OpenMP the variable is not read
    else:
        assert out.split() == ["True", "True"]


# --------------------------------------------------------------------------
# concurrent calls from Python threads (OpenVINO runs evaluate concurrently)
# --------------------------------------------------------------------------


def test_concurrent_calls_from_python_threads_give_the_serial_results():
    """The kernels release the GIL and plans are shared between calls: calls
    from several Python threads at once, with shapes and attributes that
    share cached plans, must each give the serial answer."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 8, 64, 48)).astype(np.float32)
    y = rng.standard_normal((1, 2, 33, 65)).astype(np.float64)
    jobs = [
        lambda: ovpool.avg_pool(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)),
        lambda: ovpool.avg_pool(
            x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), count_include_pad=True
        ),
        lambda: ovpool.max_pool(x, (3, 3), strides=(2, 2), return_indices=True),
        lambda: ovpool.max_pool(y, (2, 5), dilations=(2, 1), storage_order=1, return_indices=True),
        lambda: ovpool.lp_pool(y, (3, 3), p=3),
        lambda: ovpool.adaptive_avg_pool(x, (7, 5)),
        lambda: ovpool.adaptive_max_pool(y, (5, 9), index_dtype=np.int32),
        lambda: ovpool.global_avg_pool(x),
        lambda: ov_ops.max_pool(x, (2, 2), (2, 2), (1, 1), (1, 1), rounding_type="ceil", axis=2),
    ]
    serial = [job() for job in jobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [(i, pool.submit(jobs[i])) for _ in range(4) for i in range(len(jobs))]
        for i, future in futures:
            got = future.result()
            expected = serial[i]
            for a, b in zip(
                got if isinstance(got, tuple) else (got,),
                expected if isinstance(expected, tuple) else (expected,),
            ):
                np.testing.assert_array_equal(a, b)


def test_a_forked_child_runs_its_calls_on_threads_of_its_own():
    """The helper threads of the parent do not exist in a forked child: a
    child forked after the parent's threaded calls (a multiprocessing pool's
    default on Linux) starts its own and gets the parent's bits, never hangs."""
    import multiprocessing

    x = np.random.default_rng(4).standard_normal((8, 64, 40, 40)).astype(np.float32)
    expected = ovpool.max_pool(x, (3, 3), strides=(2, 2), num_threads=2)
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        got = pool.starmap(_pool_in_child, [(x, 2), (x, 1)], chunksize=1)
    for values in got:
        np.testing.assert_array_equal(values, expected)


def _pool_in_child(x, n):
    return ovpool.max_pool(x, (3, 3), strides=(2, 2), num_threads=n)


def test_a_busy_neighbour_costs_a_threaded_call_at_most_its_threads():
    """Beside a CPU-bound process, a call on 2 threads takes at most about 2x
    its time on one (medians of 40 calls, generous slack): its calling thread
    never waits a scheduler slice for a helper that has not started
    (_workers.hpp). With OpenMP's barrier it took 10-30x. Not a performance
    measurement: a bound that the barrier broke (benchmarks/contention.py
    measures)."""
    import time

    if ovpool._threads.available_cpus() < 2:
        pytest.skip("one CPU")
    x = np.random.default_rng(5).random((8, 512, 28, 28), dtype=np.float32)

    def median(n):
        times = []
        for _ in range(40):
            t = time.perf_counter()
            ovpool.adaptive_avg_pool(x, (7, 7), num_threads=n)
            times.append(time.perf_counter() - t)
        return sorted(times)[len(times) // 2]

    busy = subprocess.Popen([sys.executable, "-c", "while True:\n    pass"])
    try:
        time.sleep(0.2)
        median(2)
        one, two = median(1), median(2)
    finally:
        busy.kill()
        busy.wait()
    assert two <= 2 * one + 0.002, (one, two)


# --------------------------------------------------------------------------
# the two kernel builds (baseline x86-64 and x86-64-v3) compute the same bits
# --------------------------------------------------------------------------

_ISA_BATTERY = """
    import sys
    import numpy as np, ovpool
    from ovpool import _isa, ov_ops
    rng = np.random.default_rng(21)
    x = rng.standard_normal((2, 3, 37, 70)).astype(np.float32)
    x[0, 1, 5, 7] = np.nan
    d = rng.standard_normal((1, 2, 9, 11, 43))
    q = rng.integers(-128, 128, size=(2, 2, 19, 41)).astype(np.int8)
    # shapes the blocked kernel takes: sums of wide windows column first,
    # 16-bit 1D rows at strides of 2+, float16 3-wide averages at stride 2,
    # and (blocked_bytes made small) 3D bands in part of a depth of 29 rows
    c = rng.standard_normal((1, 16, 30, 30)).astype(np.float32)
    h1 = rng.standard_normal((1, 16, 700)).astype(np.float16)
    h1[0, 3, 100] = np.nan
    h2 = rng.standard_normal((1, 8, 40, 40)).astype(np.float16)
    h3 = rng.standard_normal((1, 11, 7, 56, 13)).astype(np.float16)
    from ovpool import _core
    _core.TUNING.update(blocked_bytes=8 * 4 * 3 * 9 * 15, blocked_units=64, thread_ns=1)
    bands = ovpool.max_pool(h3, (3, 3, 3), strides=(2, 2, 2), pads=(1,) * 6, ceil_mode=True)
    bands_i = ovpool.max_pool(h3.astype(np.float32), (3, 3, 3), strides=(2, 2, 2),
                              pads=(1,) * 6, return_indices=True)[1]
    _core.TUNING.clear()
    _core._cache.clear()
    results = {
        "bands": bands,
        "bands_i": bands_i,
        "avg_columns": ovpool.avg_pool(c, (7, 7), strides=(2, 2), pads=(3, 3, 3, 3)),
        "lp_columns": ovpool.lp_pool(c, (7, 7), strides=(2, 2), p=3),
        "max_f16_1d": ovpool.max_pool(h1, (3,), strides=(2,)),
        "avg_f16_1d": ovpool.avg_pool(h1, (5,), strides=(3,)),
        "avg_f16_s2": ovpool.avg_pool(h2, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)),
        "avg": ovpool.avg_pool(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), ceil_mode=True),
        "avg_k7": ovpool.avg_pool(x, (1, 7), count_include_pad=True, pads=(0, 3, 0, 3)),
        "avg_dil": ovpool.avg_pool(d, (2, 2, 3), dilations=(1, 2, 2)),
        "lp": ovpool.lp_pool(x, (2, 4), strides=(2, 4), p=3),
        "max": ovpool.max_pool(x, (3, 3), strides=(2, 2)),
        "max_i": ovpool.max_pool(x, (2, 5), strides=(1, 2), return_indices=True)[1],
        "max_q": ovpool.max_pool(q, (3, 3), strides=(1, 2)),
        "adaptive_avg": ovpool.adaptive_avg_pool(x, (7, 9)),
        "adaptive_avg_uniform": ovpool.adaptive_avg_pool(x[:, :, :35], (7, 14)),
        "adaptive_max": ovpool.adaptive_max_pool(d, (4, 5, 6))[0],
        "global_avg": ovpool.global_avg_pool(d),
        "global_avg_f32": ovpool.global_avg_pool(np.ascontiguousarray(c[:, :11, :7, :7])),
        "global_lp": ovpool.global_lp_pool(x, p=2),
        "global_max": ovpool.global_max_pool(q),
        "ov_avg": ov_ops.avg_pool(x, (3, 3), (2, 2), (1, 1), (1, 1), exclude_pad=False,
                                  rounding_type="ceil"),
    }
    np.savez(sys.argv[1], isa=np.array(_isa.name), **results)
"""


# /proc/cpuinfo names of the x86-64-v3 features ("abm" is LZCNT on AMD and
# Intel): an independent reading of what spec.hpp's cpu_has_x86_64_v3 asks
# the compiler's runtime.
_V3_CPU_FLAGS = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def test_baseline_and_x86_64_v3_builds_compute_the_same_bits(tmp_path):
    from ovpool import _isa, _spec

    assert _spec.cpu_has_x86_64_v3() == (_V3_CPU_FLAGS <= _cpu_flags())
    if _V3_CPU_FLAGS <= _cpu_flags():
        assert _isa.name == "x86-64-v3", "this CPU supports x86-64-v3: auto must pick it"
    files = {}
    for isa in ("baseline", "auto"):
        path = tmp_path / f"{isa}.npz"
        env = dict(
            os.environ,
            OVPOOL_ISA=isa,
            PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
        )
        result = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(_ISA_BATTERY), str(path)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        files[isa] = np.load(path)
    assert str(files["baseline"]["isa"]) == "baseline"
    assert str(files["auto"]["isa"]) == _isa.name
    for key in files["baseline"].files:
        if key == "isa":
            continue
        a, b = files["baseline"][key], files["auto"][key]
        assert a.dtype == b.dtype and a.shape == b.shape, key
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), key
