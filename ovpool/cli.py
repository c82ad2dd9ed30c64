"""The ``ovpool`` command (also ``python -m ovpool``)."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from . import __version__, _kernels
from ._threads import get_num_threads
from .errors import OvpoolError


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # bad usage: one line, exit status 2
        self.exit(2, f"ovpool: error: {message}\n")


def _selfcheck(args):
    """Run hand-computed cases from the ONNX and OpenVINO specifications."""
    from . import ops

    x44 = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    x55 = np.arange(1, 26, dtype=np.float32).reshape(1, 1, 5, 5)
    cases = [
        ("onnx averagepool_2d_ceil",
         lambda: ops.avg_pool(x44, (3, 3), strides=(2, 2), ceil_mode=True),
         np.array([[[[6, 7.5], [12, 13.5]]]], np.float32)),
        ("onnx maxpool_2d_precomputed_pads",
         lambda: ops.max_pool(x55, (5, 5), pads=(2, 2, 2, 2))[0, 0, 0],
         np.array([13, 14, 15, 15, 15], np.float32)),
        ("onnx maxpool_with_argmax storage_order=1",
         lambda: ops.max_pool(x55, (2, 2), strides=(2, 2), storage_order=1,
                              return_indices=True)[1],
         np.array([[[[6, 16], [8, 18]]]], np.int64)),
        ("openvino adaptive_avg_pool 7 -> 3",
         lambda: ops.adaptive_avg_pool(np.arange(7, dtype=np.float32).reshape(1, 1, 7), 3),
         np.array([[[1.0, 3.0, 5.0]]], np.float32)),
    ]
    failed = 0
    for name, run, expected in cases:
        got = run()
        ok = got.shape == expected.shape and np.allclose(got, expected)
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(f"ovpool {__version__}: OpenMP {'on' if _kernels.openmp_enabled() else 'OFF'}, "
          f"{get_num_threads()} threads; {len(cases) - failed}/{len(cases)} cases passed")
    return 1 if failed else 0


def build_parser():
    parser = _Parser(prog="ovpool", description="Fast, exact pooling for OpenVINO IR and ONNX.")
    parser.add_argument("--version", action="version", version=f"ovpool {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    selfcheck = commands.add_parser("selfcheck", help="check the installed kernels on known cases")
    selfcheck.set_defaults(func=_selfcheck)

    def _bench(args):  # imported lazily: the peers (torch, onnxruntime, openvino) load only here
        from .bench import main as bench_main
        return bench_main(args.bench_args)

    # prefix_chars="+": every option after "bench" goes to benchmarks/run.py untouched
    bench = commands.add_parser("bench", add_help=False, prefix_chars="+",
                                help="time ovpool against PyTorch, ONNX Runtime and OpenVINO "
                                     "(source checkout; `ovpool bench --help`)")
    bench.add_argument("bench_args", nargs=argparse.REMAINDER)
    bench.set_defaults(func=_bench)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except OvpoolError as exc:  # an expected error: one line, no traceback
        print(f"ovpool: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
