"""``python -m ovpool.openvino``: build and locate ovpool's OpenVINO extension.

::

    python -m ovpool.openvino build          # against the installed OpenVINO, into ovpool/lib
    python -m ovpool.openvino build --output DIR --build-dir DIR -j 4 --force
    python -m ovpool.openvino path           # the library's path (for benchmark_app -extensions)
    python -m ovpool.openvino info           # what it is and what it was built against
"""

from __future__ import annotations

import argparse
import sys

from . import _library


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ovpool.openvino", description="ovpool's OpenVINO extension library"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser(
        "build", help="build libovpool_openvino.so against the installed OpenVINO"
    )
    build.add_argument(
        "--output", default=None, help=f"folder for the library (default {_library.default_dir()})"
    )
    build.add_argument(
        "--build-dir",
        default=None,
        help="CMake build folder, kept for incremental rebuilds (default: temporary)",
    )
    build.add_argument("-j", "--jobs", type=int, default=None, help="parallel compile jobs")
    build.add_argument(
        "--force", action="store_true", help="rebuild even if the library is up to date"
    )
    build.add_argument("--verbose", action="store_true", help="show CMake's output")
    sub.add_parser("path", help="print the library's path")
    sub.add_parser("info", help="print what the library is and what it was built against")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            print(
                _library.build(
                    args.output,
                    build_dir=args.build_dir,
                    jobs=args.jobs,
                    verbose=args.verbose,
                    force=args.force,
                )
            )
        elif args.command == "path":
            print(_library.extension_path())
        else:
            path = _library.extension_path()
            record = _library.read_record(__import__("pathlib").Path(path)) or {}
            print(path)
            for key in ("openvino_version", "ovpool", "sources"):
                if key in record:
                    print(f"{key}: {record[key]}")
            print("up to date with these sources:", _library.is_current())
    except _library.ExtensionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
