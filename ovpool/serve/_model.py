"""The server side of :mod:`ovpool.serve` (KServe, OpenVINO)."""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import OvpoolError, OvpoolValueError
from . import DEFAULT_CONFIG, POLICIES, ModelLoadError, ServeNotInstalled, find_models

try:
    import kserve
    import orjson
    from kserve.constants.constants import INFERENCE_CONTENT_LENGTH_HEADER
    from kserve.errors import InvalidInput
    from kserve.logging import logger
    from kserve.protocol.dataplane import DataPlane
    from kserve.protocol.infer_type import (
        InferInput,
        InferOutput,
        InferRequest,
        InferResponse,
        RequestedOutput,
    )
except ImportError as _exc:
    raise ServeNotInstalled(
        f"ovpool.serve needs KServe, which could not be imported ({_exc}). "
        'Install it with: pip install "ovpool[serve]"',
        name="kserve",
    ) from _exc

from .. import openvino as ovp

ov = ovp.ov

# OpenVINO element type -> the v2 protocol's datatype and numpy's dtype
_DATATYPES = {
    "boolean": ("BOOL", np.dtype(np.bool_)),
    "u8": ("UINT8", np.dtype(np.uint8)),
    "i8": ("INT8", np.dtype(np.int8)),
    "u16": ("UINT16", np.dtype(np.uint16)),
    "i16": ("INT16", np.dtype(np.int16)),
    "u32": ("UINT32", np.dtype(np.uint32)),
    "i32": ("INT32", np.dtype(np.int32)),
    "u64": ("UINT64", np.dtype(np.uint64)),
    "i64": ("INT64", np.dtype(np.int64)),
    "f16": ("FP16", np.dtype(np.float16)),
    "f32": ("FP32", np.dtype(np.float32)),
    "f64": ("FP64", np.dtype(np.float64)),
}
_ITEMSIZE = {datatype: dtype.itemsize for datatype, dtype in _DATATYPES.values()}


# --------------------------------------------------------------------------
# Ports: what a model takes and gives, in the protocol's terms
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Port:
    name: str  # the name the protocol uses
    names: frozenset[str]  # every name of the tensor (an input is found by any)
    datatype: str
    dtype: np.dtype
    # (min, max) per dim, max -1 for unbounded; None: any rank
    dims: tuple[tuple[int, int], ...] | None

    def metadata(self) -> dict:
        dims = self.dims if self.dims is not None else ((0, -1),)
        return {
            "name": self.name,
            "datatype": self.datatype,
            "shape": [lo if lo == hi else -1 for lo, hi in dims],
        }

    def describe(self) -> str:
        return f"{self.name} ({self.datatype} {_format_dims(self.dims)})"

    def accepts(self, shape: list[int]) -> bool:
        if self.dims is None:
            return True
        return len(shape) == len(self.dims) and all(
            lo <= d and (hi < 0 or d <= hi) for d, (lo, hi) in zip(shape, self.dims)
        )


def _format_dims(dims):
    if dims is None:
        return "[...]"
    text = []
    for lo, hi in dims:
        if lo == hi:
            text.append(str(lo))
        elif hi < 0:
            text.append("?" if lo == 0 else f"{lo}..")
        else:
            text.append(f"{lo}..{hi}")
    return "[" + ",".join(text) + "]"


def _shape_text(shape):
    return "[" + ",".join(map(str, shape)) + "]"


def _port(output, role, k, model_name):
    etype = output.get_element_type().get_type_name()
    if etype not in _DATATYPES:
        raise ModelLoadError(
            f"model '{model_name}': {role} {k} is of element type {etype}, which the v2 "
            f"protocol cannot carry here (ovpool.serve carries {', '.join(sorted(_DATATYPES))})"
        )
    datatype, dtype = _DATATYPES[etype]
    names = frozenset(output.get_names())
    name = output.get_any_name() if names else f"{role}_{k}"
    pshape = output.get_partial_shape()
    dims = None
    if pshape.rank.is_static:
        dims = tuple((d.get_min_length(), d.get_max_length()) for d in pshape)
    return _Port(name, names or frozenset({name}), datatype, dtype, dims)


def _openvino_message(exc: BaseException) -> str:
    """OpenVINO's message without the source locations it stacks up."""
    text = re.sub(r"Exception from \S+:\d+:|Caught exception:", " ", str(exc))
    return " ".join(text.split()) or type(exc).__name__


# --------------------------------------------------------------------------
# Reading and compiling
# --------------------------------------------------------------------------


def _read(core, path, policy):
    path = Path(path)
    if path.suffix == ".xml":
        if policy == "native":
            return core.read_model(str(path))
        return ovp.read_model(core, str(path), policy=policy)
    if policy == "native":
        return core.read_model(str(path))
    with ovp.conversion_policy(policy):
        return ovp.register(core).read_model(str(path))


def _on_ovpool(model):
    return sum(1 for n in model.get_ordered_ops() if n.get_type_info().version_id == "ovpool")


class OvpoolModel(kserve.Model):
    """A model served by KServe's model server, compiled by OpenVINO with its
    pool layers on ovpool's extension library.

    Parameters
    ----------
    name : str
        The name the protocol serves it under (``/v2/models/NAME``).
    path : str or os.PathLike
        An OpenVINO IR (``.xml``, its weights in the ``.bin`` beside it) or
        an ONNX model (``.onnx``).
    policy : {"default", "all", "native"}
        Which pool nodes move onto ovpool's ops (see
        :func:`ovpool.openvino.patch_model`); ``"native"``: none, and the
        library is not loaded (plain OpenVINO).
    config : dict, optional
        Keys added to or overriding :data:`DEFAULT_CONFIG` for
        ``compile_model``.
    core : openvino.Core, optional
        The Core to read and compile with (one of its own by default; with
        ``policy="native"`` it must not hold the library).

    Examples
    --------
    >>> from ovpool.serve import OvpoolModel, model_server
    >>> model = OvpoolModel("chain", "ir_examples/chain.xml")
    >>> model.load()  # doctest: +SKIP
    True
    >>> model_server(http_port=8080, grpc_port=8081).start([model])  # doctest: +SKIP
    """

    def __init__(
        self,
        name: str,
        path: str | os.PathLike,
        *,
        policy: str = "default",
        config: dict[str, Any] | None = None,
        core: Any = None,
    ) -> None:
        super().__init__(name)
        if policy not in POLICIES:
            raise OvpoolValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        self.path = Path(path)
        self.policy = policy
        self.config = {**DEFAULT_CONFIG, **(config or {})}
        self._core = core
        self.compiled = None
        self.on_ovpool = 0  # pool nodes on ovpool's ops
        self.inputs: list[_Port] = []
        self.outputs: list[_Port] = []
        self._by_name: dict[str, int] = {}
        self._requests: list = []
        self._idle: asyncio.Queue | None = None
        self._idle_loop: asyncio.AbstractEventLoop | None = None
        self._executor: ThreadPoolExecutor | None = None

    # -- loading ----------------------------------------------------------

    def load(self) -> bool:
        """Read and compile the model; ``ready`` afterwards.

        Raises
        ------
        ModelLoadError
            The file is missing, malformed or hostile (ovpool's IR reader
            refuses it), or OpenVINO cannot read or compile it; the message
            names the model and the file.
        """
        where = f"model '{self.name}' ({self.path})"
        core = self._core if self._core is not None else ov.Core()
        try:
            model = _read(core, self.path, self.policy)
        except (OvpoolError, RuntimeError, OSError) as exc:
            raise ModelLoadError(f"{where} could not be read: {_openvino_message(exc)}") from exc
        self.on_ovpool = _on_ovpool(model)
        try:
            compiled = core.compile_model(model, "CPU", self.config)
        except (RuntimeError, TypeError) as exc:
            raise ModelLoadError(
                f"{where}: OpenVINO could not compile it: {_openvino_message(exc)}"
            ) from exc
        inputs = [_port(p, "input", k, self.name) for k, p in enumerate(compiled.inputs)]
        outputs = [_port(p, "output", k, self.name) for k, p in enumerate(compiled.outputs)]
        seen: set[str] = set()
        for k, port in enumerate(outputs):  # the protocol names outputs: make the names unique
            if port.name in seen:
                outputs[k] = _Port(f"output_{k}", port.names, port.datatype, port.dtype, port.dims)
            seen.add(outputs[k].name)
        count = max(1, int(compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")))
        self.compiled, self.inputs, self.outputs = compiled, inputs, outputs
        self._by_name = {n: k for k, port in enumerate(inputs) for n in port.names}
        self._requests = [compiled.create_infer_request() for _ in range(count)]
        self._idle, self._idle_loop = None, None
        self._executor = ThreadPoolExecutor(count, thread_name_prefix=f"ovpool-serve-{self.name}")
        self.ready = True
        logger.info(
            "ovpool.serve: %s: %d pool node(s) on ovpool's ops (policy %s), %d infer requests, "
            "%s streams",
            where,
            self.on_ovpool,
            self.policy,
            count,
            compiled.get_property("NUM_STREAMS"),
        )
        return True

    def stop(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        self.ready = False

    # -- metadata ---------------------------------------------------------

    def get_input_types(self) -> list[dict]:
        return [port.metadata() for port in self.inputs]

    def get_output_types(self) -> list[dict]:
        return [port.metadata() for port in self.outputs]

    # -- inference --------------------------------------------------------

    def _refuse(self, message: str) -> InvalidInput:
        return InvalidInput(f"model '{self.name}': {message}")

    def _feeds(self, request: InferRequest) -> dict[int, np.ndarray]:
        feeds: dict[int, np.ndarray] = {}
        for given in request.inputs:
            k = self._by_name.get(given.name)
            if k is None:
                raise self._refuse(
                    f"no input named {given.name!r}; it takes "
                    + ", ".join(p.describe() for p in self.inputs)
                )
            if k in feeds:
                raise self._refuse(f"input {given.name!r} is given twice")
            feeds[k] = self._array(self.inputs[k], given)
        missing = [p.describe() for k, p in enumerate(self.inputs) if k not in feeds]
        if missing:
            raise self._refuse("the request lacks input " + ", ".join(missing))
        return feeds

    def _array(self, port: _Port, given: InferInput) -> np.ndarray:
        shape = given.shape
        if not isinstance(shape, (list, tuple)) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in shape
        ):
            raise self._refuse(f"input {given.name!r}: shape {shape!r} is not a list of sizes")
        shape = [int(d) for d in shape]
        if given.datatype != port.datatype:
            raise self._refuse(
                f"input {given.name!r} takes {port.datatype}, the request sends {given.datatype}"
            )
        if not port.accepts(shape):
            raise self._refuse(
                f"input {given.name!r} takes shape {_format_dims(port.dims)}, the request "
                f"sends {_shape_text(shape)}"
            )
        count = math.prod(shape)
        raw = given._raw_data  # binary data: set by gRPC's raw contents and the HTTP decoder
        if raw is not None:
            need = count * port.dtype.itemsize
            if len(raw) != need:
                raise self._refuse(
                    f"input {given.name!r}: {len(raw)} bytes of binary data, but shape "
                    f"{_shape_text(shape)} of {port.datatype} needs {need}"
                )
            return np.frombuffer(raw, dtype=port.dtype).reshape(shape)
        if given.data is None:
            raise self._refuse(f"input {given.name!r} has no data")
        try:
            array = np.asarray(given.data, dtype=port.dtype)
        except (ValueError, TypeError, OverflowError) as exc:
            raise self._refuse(
                f"input {given.name!r}: its data is not {port.datatype}: {exc}"
            ) from None
        if array.size != count:
            raise self._refuse(
                f"input {given.name!r} holds {array.size} values, but shape "
                f"{_shape_text(shape)} needs {count}"
            )
        return array.reshape(shape)

    def _wanted(self, request: InferRequest) -> list[int]:
        if not request.request_outputs:
            return list(range(len(self.outputs)))
        by_name = {port.name: k for k, port in enumerate(self.outputs)}
        wanted = []
        for asked in request.request_outputs:
            if asked.name not in by_name:
                raise self._refuse(
                    f"no output named {asked.name!r}; it gives "
                    + ", ".join(p.describe() for p in self.outputs)
                )
            wanted.append(by_name[asked.name])
        return wanted

    def _idle_requests(self) -> asyncio.Queue:
        loop = asyncio.get_running_loop()
        if self._idle is None or self._idle_loop is not loop:
            self._idle, self._idle_loop = asyncio.Queue(), loop
            for request in self._requests:
                self._idle.put_nowait(request)
        return self._idle

    async def infer(self, feeds: dict[int, np.ndarray]) -> list[np.ndarray]:
        """Run one inference on a free infer request; every output, copied.

        Raises ``RuntimeError`` with OpenVINO's message when OpenVINO
        refuses the inputs (a shape out of the model's range, a shape over
        ovpool's memory budget, ...).
        """
        if self._executor is None:
            raise RuntimeError(f"model '{self.name}' is not loaded")
        idle = self._idle_requests()
        request = await idle.get()
        loop = asyncio.get_running_loop()
        done = loop.run_in_executor(self._executor, _run, request, feeds)
        # the infer request goes back when OpenVINO is done with it, even when
        # the client that asked went away (its coroutine cancelled) first
        done.add_done_callback(lambda _: idle.put_nowait(request))
        return await asyncio.shield(done)

    async def predict(
        self,
        payload: InferRequest | dict,
        headers: dict[str, str] | None = None,
        response_headers: dict[str, str] | None = None,
    ) -> InferResponse:
        if not isinstance(payload, InferRequest):
            raise self._refuse(
                f"ovpool.serve speaks the v2 protocol: POST /v2/models/{self.name}/infer"
            )
        feeds = self._feeds(payload)
        wanted = self._wanted(payload)
        try:
            arrays = await self.infer(feeds)
        except RuntimeError as exc:
            # the model compiled and the inputs match its ports: what OpenVINO
            # refuses now is this request's (a shape past a bound, the budget)
            raise self._refuse(f"OpenVINO refused the request: {_openvino_message(exc)}") from exc
        outputs = []
        for position, k in enumerate(wanted):
            port, array = self.outputs[k], arrays[k]
            if not payload.from_grpc and array.dtype.kind == "f" and np.isinf(array).any():
                asked = payload.request_outputs[position] if payload.request_outputs else None
                binary = asked.binary_data if asked is not None else payload.use_binary_outputs
                if not binary:
                    raise self._refuse(
                        f"output {port.name!r} holds an infinity, which JSON cannot carry "
                        "(it would arrive as null): ask for it as binary data (the request "
                        'parameter "binary_data_output": true, or the output\'s '
                        '"binary_data": true)'
                    )
            output = InferOutput(port.name, list(array.shape), port.datatype)
            if payload.from_grpc:  # raw contents: KServe's encoder trips over an array here
                output.set_data_from_numpy(array, binary_data=True)
            else:
                output.data = array
            outputs.append(output)
        return InferResponse(
            response_id=payload.id or str(uuid.uuid4()),
            model_name=self.name,
            infer_outputs=outputs,
            use_binary_outputs=payload.use_binary_outputs,
            requested_outputs=payload.request_outputs,
        )


def _run(request, feeds):
    """In a helper thread: start an asynchronous infer request and wait for
    it. (OpenVINO calls an infer request's callback only when it succeeds;
    waiting is what also learns of a failure.)"""
    request.start_async(feeds)
    request.wait()
    return [
        np.array(request.get_output_tensor(k).data, copy=True)
        for k in range(len(request.model_outputs))
    ]


# --------------------------------------------------------------------------
# A folder of models
# --------------------------------------------------------------------------


def load_models(
    model_dir: str | os.PathLike,
    model_name: str | None = None,
    *,
    policy: str = "default",
    config: dict[str, Any] | None = None,
) -> list[OvpoolModel]:
    """Read and compile every model :func:`find_models` finds; one Core for
    all. Raises :class:`ModelLoadError` naming the first that fails."""
    core = ov.Core()
    models = []
    for name, path in find_models(model_dir, model_name).items():
        model = OvpoolModel(name, path, policy=policy, config=config, core=core)
        model.load()
        models.append(model)
    return models


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


def _body_error(message):
    return InvalidInput(f"malformed request body: {message}")


def _request_from_bytes(body: bytes, headers: dict, model_name: str) -> InferRequest:
    """A v2 request sent as JSON followed by binary data (the binary tensor
    extension; all JSON without the Inference-Header-Content-Length header),
    checked part by part. KServe's own decoder turns binary
    data into Python lists and answers a truncated body with a 500; this one
    keeps the bytes and names what does not add up."""
    text = headers.get(INFERENCE_CONTENT_LENGTH_HEADER)
    if text is None:  # all JSON (a client that sent no JSON content type)
        json_length = len(body)
    else:
        try:
            json_length = int(text)
        except ValueError:
            raise _body_error(
                f"Inference-Header-Content-Length is {text!r}, not a byte count"
            ) from None
    if not 0 < json_length <= len(body):
        raise _body_error(
            f"Inference-Header-Content-Length says the JSON part is {json_length} bytes, "
            f"the body has {len(body)}"
        )
    try:
        head = orjson.loads(body[:json_length])
    except orjson.JSONDecodeError as exc:
        raise _body_error(f"its JSON part is not valid JSON: {exc}") from None
    if not isinstance(head, dict) or not isinstance(head.get("inputs"), list):
        raise _body_error('its JSON part has no "inputs" list')
    offset = json_length
    inputs, raw = [], []
    for k, item in enumerate(head["inputs"]):
        if not isinstance(item, dict):
            raise _body_error(f"input {k} is not an object")
        name, shape, datatype = item.get("name"), item.get("shape"), item.get("datatype")
        parameters = item.get("parameters") or {}
        if not isinstance(name, str) or not isinstance(datatype, str):
            raise _body_error(f"input {k} lacks a name or a datatype")
        if not isinstance(shape, list) or not isinstance(parameters, dict):
            raise _body_error(f"input {name!r}: shape must be a list, parameters an object")
        given = InferInput(name, shape, datatype, parameters=parameters)
        data = None
        if "data" in item:
            given.data = item["data"]
        elif "binary_data_size" in parameters:
            size = parameters["binary_data_size"]
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise _body_error(f"input {name!r}: binary_data_size {size!r} is not a byte count")
            if offset + size > len(body):
                raise _body_error(
                    f"input {name!r} declares {size} bytes of binary data, but only "
                    f"{len(body) - offset} follow (a truncated body?)"
                )
            data = body[offset : offset + size]
            offset += size
        else:
            raise _body_error(f"input {name!r} has neither data nor a binary_data_size parameter")
        inputs.append(given)
        raw.append(data)
    if offset != len(body):
        raise _body_error(
            f"{len(body) - offset} bytes follow the binary data that the inputs declare"
        )
    outputs = head.get("outputs")
    requested = None
    if outputs is not None:
        if not isinstance(outputs, list) or not all(
            isinstance(o, dict) and isinstance(o.get("name"), str) for o in outputs
        ):
            raise _body_error('"outputs" must be a list of objects with a name')
        requested = [RequestedOutput(o["name"], o.get("parameters")) for o in outputs] or None
    request_id, parameters = head.get("id"), head.get("parameters")
    if request_id is not None and not isinstance(request_id, str):
        raise _body_error('"id" must be a string')
    if parameters is not None and not isinstance(parameters, dict):
        raise _body_error('"parameters" must be an object')
    request = InferRequest(
        model_name=model_name,
        infer_inputs=inputs,
        request_id=request_id,
        parameters=parameters,
        request_outputs=requested,
    )
    for given, data in zip(inputs, raw):
        given._raw_data = data  # what InferRequest(raw_inputs=...) sets, input by input
    return request


class _DataPlane(DataPlane):
    """KServe's data plane with a stricter decoder of HTTP bodies: whatever
    fails while a client's body is decoded is the client's, a 400."""

    def decode(self, body, headers, *args, **kwargs):
        try:
            return super().decode(body, headers, *args, **kwargs)
        except InvalidInput:
            raise
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise _body_error(str(exc)) from exc

    def decode_inference_request(self, body, headers, model_name):
        if isinstance(body, bytes):
            return _request_from_bytes(body, headers, model_name)
        return super().decode_inference_request(body, headers, model_name)


def model_server(**options: Any) -> kserve.ModelServer:
    """A :class:`kserve.ModelServer` (``options`` are its own: ``http_port``,
    ``grpc_port``, ...) whose HTTP decoder answers every malformed body with
    a 400 naming what is wrong; ``.start(models)`` serves them."""
    server = kserve.ModelServer(**options)
    server.dataplane = _DataPlane(model_registry=server.registered_models)
    return server


def parse_plugin_config(text: str) -> dict[str, Any]:
    """``--plugin_config``: a JSON object of OpenVINO properties (as OpenVINO
    Model Server's option of the same name)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OvpoolValueError(f"--plugin_config is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise OvpoolValueError(f"--plugin_config must be a JSON object, got {text!r}")
    return value
