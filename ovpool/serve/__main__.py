"""``python -m ovpool.serve``: serve IR and ONNX models with ovpool's OpenVINO
extension over the v2 protocol (HTTP and gRPC), with KServe's model server.

::

    python -m ovpool.serve --model_dir ir_examples/     # each model under its file name
    python -m ovpool.serve --model_dir /mnt/models --model_name resnet  # KServe's runtime
    python -m ovpool.serve --model_dir DIR --http_port 8080 --grpc_port 8081 --policy all
    python -m ovpool.serve --model_dir DIR --plugin_config '{"NUM_STREAMS": 1}'

KServe's own server options (``--http_port``, ``--grpc_port``,
``--max_threads``, ``--enable_latency_logging``, ...) are accepted as its
custom runtimes accept them. A model that cannot be read or compiled stops
the server before it listens, with a message naming the model.
"""

from __future__ import annotations

import argparse
import sys

from kserve import model_server as _kserve_server

from ..errors import OvpoolValueError
from . import POLICIES, ModelLoadError
from ._model import load_models, model_server, parse_plugin_config


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ovpool.serve",
        parents=[_kserve_server.parser],
        description="Serve OpenVINO IR and ONNX models with ovpool's extension library over "
        "the v2 protocol (HTTP and gRPC), with KServe's model server.",
    )
    parser.add_argument(
        "--model_dir",
        required=True,
        help="a folder of .xml (IR, weights in the .bin beside each) and .onnx files, each "
        "served under its file name, or one model file",
    )
    parser.add_argument(
        "--policy",
        choices=POLICIES,
        default="default",
        help="which pool layers move onto ovpool's ops (ovpool.openvino.patch_model); "
        "native: none, plain OpenVINO without the library (for comparison)",
    )
    parser.add_argument(
        "--plugin_config",
        default=None,
        metavar="JSON",
        help='OpenVINO properties for compile_model, over the defaults {"PERFORMANCE_HINT": '
        '"THROUGHPUT", "INFERENCE_PRECISION_HINT": "f32"}',
    )
    # KServe's parser names every model "model" unless told: here the file names do
    parser.set_defaults(model_name=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.workers != 1:
        print(
            "error: ovpool.serve runs one process (OpenVINO's streams already use every "
            "core); scale out with more replicas, not --workers",
            file=sys.stderr,
        )
        return 2
    server = model_server(  # first: it sets up the logging that loading reports to
        http_port=args.http_port,
        grpc_port=args.grpc_port,
        max_threads=args.max_threads,
        max_asyncio_workers=args.max_asyncio_workers,
        enable_grpc=args.enable_grpc,
        enable_latency_logging=args.enable_latency_logging,
    )
    try:
        config = parse_plugin_config(args.plugin_config) if args.plugin_config else None
        models = load_models(args.model_dir, args.model_name, policy=args.policy, config=config)
    except (ModelLoadError, OvpoolValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    server.start(models)
    return 0


if __name__ == "__main__":
    sys.exit(main())
