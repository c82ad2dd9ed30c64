"""The small-call group on an installed ovpool, as a smoke: each call of
``benchmarks/small_calls.py`` made through a prepared pool (and as the numpy
function) gives the function's result, and the times are printed. No time is
asserted: on a shared machine such an assertion would fail by chance.

    python .ci/small_calls_smoke.py BENCHMARKS_DIR
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np

import ovpool


def main(benchmarks: Path) -> None:
    spec = importlib.util.spec_from_file_location("small_calls", benchmarks / "small_calls.py")
    small_calls = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(small_calls)
    x = np.random.default_rng(0).standard_normal(small_calls.SHAPE).astype(np.float32)
    for name, _, calls in small_calls._calls(x, None):
        got, want = calls["pool"](), calls["function"]()
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), name
    report = small_calls.run(rounds=3, block_s=0.005, with_torch=False)
    where = Path(ovpool.__file__).parent
    print(f"ovpool {ovpool.__version__} from {where}, {ovpool._isa.name} kernels")
    print(small_calls.markdown(report))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
