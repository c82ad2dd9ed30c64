"""ovpool's OpenVINO extension behind KServe's model server.

A :class:`kserve.Model` that serves an OpenVINO IR (``.xml``) or ONNX model
with its pool layers on ovpool's extension library, over the v2 protocol
(the Open Inference Protocol that OpenVINO Model Server and Triton speak:
``POST /v2/models/NAME/infer`` over HTTP, ``ModelInfer`` over gRPC)::

    python -m ovpool.serve --model_dir DIR [--model_name NAME] [--http_port 8080]
        [--grpc_port 8081] [--policy default|all|native] [--plugin_config JSON]

Each model is read once (:func:`ovpool.openvino.read_model` for IR, the
library's ONNX conversions for ONNX, under ``--policy``), compiled once with
OpenVINO's throughput settings (``PERFORMANCE_HINT=THROUGHPUT``,
``INFERENCE_PRECISION_HINT=f32``; ``--plugin_config`` adds or overrides
keys), and run through a pool of OpenVINO asynchronous infer requests (as
many as the compiled model's ``OPTIMAL_NUMBER_OF_INFER_REQUESTS``): a request
waits for a free infer request, starts it, and the event loop serves other
requests until it is done. Model metadata (inputs, outputs, datatypes and
shapes, -1 for a dynamic dimension) comes from the compiled model; KServe
answers liveness and readiness (``/v2/health/live``, ``/v2/health/ready``,
``/v2/models/NAME/ready``).

A bad request (unknown model, input or output name, a datatype or shape the
model does not take, data of the wrong length, a malformed or truncated
body, a shape over ovpool's memory budget) is answered with HTTP 400 (404
for an unknown model; gRPC ``INVALID_ARGUMENT`` / ``NOT_FOUND``) and a
message naming what is wrong; the server goes on serving.

The server needs the ``serve`` extra (``pip install "ovpool[serve]"``).
``import ovpool`` never imports this package, and this package imports
KServe only when the server is asked for (``OvpoolModel``, ``load_models``,
``model_server``, ``python -m ovpool.serve``): KServe's and Triton's client
protobufs both define the package ``inference``, so a process that uses
``tritonclient.grpc`` cannot also import KServe's, and the clients (the
tests, the benchmark) start the server in a child process.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import OvpoolError, OvpoolValueError

__all__ = [
    "OvpoolModel",
    "ModelLoadError",
    "ServeNotInstalled",
    "find_models",
    "load_models",
    "model_server",
    "DEFAULT_CONFIG",
    "POLICIES",
    "MODEL_SUFFIXES",
]

MODEL_SUFFIXES = (".xml", ".onnx")
"""The model files a folder is searched for."""

POLICIES = ("default", "all", "native")
"""``--policy``: ovpool's patch policies (:data:`ovpool.openvino.POLICIES`),
and ``"native"`` (plain OpenVINO, without the library: the same server for
comparison)."""

DEFAULT_CONFIG = {"PERFORMANCE_HINT": "THROUGHPUT", "INFERENCE_PRECISION_HINT": "f32"}
"""What each model is compiled with; ``--plugin_config`` adds or overrides
keys. f32 because on CPUs with bf16 support OpenVINO would otherwise run
some layers (convolutions, matrix products) in bf16 and serve other numbers
than the model computes."""

_SERVER = ("OvpoolModel", "load_models", "model_server")


class ServeNotInstalled(OvpoolError, ImportError):
    """The server asked for without KServe installed."""


class ModelLoadError(OvpoolValueError):
    """A model could not be read or compiled; the message names it."""


def __getattr__(name):
    if name in _SERVER:
        from . import _model

        return getattr(_model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def find_models(model_dir: str | os.PathLike, model_name: str | None = None) -> dict[str, Path]:
    """The model files in ``model_dir`` by the name each is served under.

    Every ``.xml`` and ``.onnx`` file directly in the folder, under its file
    name without the suffix. With ``model_name``: the file of that name, or
    the folder's only model (a KServe storage folder holding ``model.xml``)
    under ``model_name``. ``model_dir`` may also be one model file.

    Raises
    ------
    ModelLoadError
        No such folder, no model in it, two files of one name, or no file
        for ``model_name`` among several.
    """
    path = Path(model_dir)
    if path.is_file():
        if path.suffix not in MODEL_SUFFIXES:
            raise ModelLoadError(f"{path} is not a model file ({', '.join(MODEL_SUFFIXES)})")
        return {model_name or path.stem: path}
    if not path.is_dir():
        raise ModelLoadError(f"model_dir {path} is no folder or model file")
    found: dict[str, Path] = {}
    for file in sorted(path.iterdir()):
        if file.suffix in MODEL_SUFFIXES and file.is_file():
            if file.stem in found:
                raise ModelLoadError(
                    f"two models named '{file.stem}' in {path}: {found[file.stem].name} and "
                    f"{file.name}"
                )
            found[file.stem] = file
    if not found:
        raise ModelLoadError(f"no model ({', '.join(MODEL_SUFFIXES)} file) in {path}")
    if model_name is None:
        return found
    if model_name in found:
        return {model_name: found[model_name]}
    if len(found) == 1:
        return {model_name: next(iter(found.values()))}
    raise ModelLoadError(
        f"no model named '{model_name}' among the {len(found)} in {path} "
        f"({', '.join(found)}); leave out --model_name to serve them all"
    )
