"""ovpool.serve: ovpool's OpenVINO extension behind KServe's model server.

The server runs in a child process on free loopback ports (started and
stopped by the tests) on ``ir_examples/``; every answer is checked against
native OpenVINO's result for the same model with ovpool's ops, computed in
this process with the same compile settings, bit for bit. Bad requests get
a 4xx (gRPC: INVALID_ARGUMENT / NOT_FOUND) naming what is wrong and the
server answers the next request right; a load test sends a fixed number of
requests from concurrent HTTP and gRPC clients with hostile ones among them.

This process never imports KServe: its protobufs and tritonclient's gRPC
ones both define the package ``inference``, and one process cannot hold
both; whatever needs KServe runs in a child process.
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
if importlib.util.find_spec("kserve") is None:  # the server's; never imported here (see below)
    pytest.skip(
        "KServe is not installed (the test and serve extras install it)", allow_module_level=True
    )
grpc = pytest.importorskip("grpc")
tritonhttp = pytest.importorskip("tritonclient.http")
tritongrpc = pytest.importorskip("tritonclient.grpc")

from tritonclient.grpc import service_pb2, service_pb2_grpc  # noqa: E402
from tritonclient.utils import InferenceServerException  # noqa: E402

import ovpool.openvino as ovp  # noqa: E402
from ovpool import _check  # noqa: E402
from ovpool.serve import DEFAULT_CONFIG, ModelLoadError, find_models  # noqa: E402
from ovpool.serve._launch import ServerProcess  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "ir_examples"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.xml"))
BUDGET = "256K"  # the server's OVPOOL_MEMORY_BUDGET: every example fits, a large batch not
OVER_BUDGET = (2048, 3, 8, 8)  # dynamic_shape's AdaptiveAvgPool output: 384 KiB
DATATYPES = {np.dtype(np.float32): "FP32", np.dtype(np.float16): "FP16"}


# --------------------------------------------------------------------------
# The reference: native OpenVINO with ovpool's ops, in this process
# --------------------------------------------------------------------------


class Reference:
    """Each example read with ovpool.openvino.read_model (the default policy,
    as the server) and compiled with the server's settings."""

    def __init__(self):
        self.core = ovp.register(ov.Core())
        self.compiled = {}

    def model(self, name):
        if name not in self.compiled:
            model = ovp.read_model(self.core, str(EXAMPLES / f"{name}.xml"))
            self.compiled[name] = self.core.compile_model(model, "CPU", DEFAULT_CONFIG)
        return self.compiled[name]

    def outputs(self, name, inputs):
        """{output name: array} for inputs in the model's order."""
        compiled = self.model(name)
        request = compiled.create_infer_request()
        request.infer(list(inputs))
        return {
            port.get_any_name(): np.array(request.get_output_tensor(k).data, copy=True)
            for k, port in enumerate(compiled.outputs)
        }

    def input_names(self, name):
        return [port.get_any_name() for port in self.model(name).inputs]


@pytest.fixture(scope="module")
def reference(ov_extension):
    return Reference()


def recorded_inputs(name):
    return _check.load_recording(str(EXAMPLES / f"{name}.xml")).inputs


def dynamic_inputs(seed):
    """Inputs of dynamic_shape.xml ([?,3,8..32,8..32]) of varied shapes."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 4)), 3, int(rng.integers(8, 33)), int(rng.integers(8, 33)))
    return [rng.standard_normal(shape).astype(np.float32)]


def assert_same_bits(got, want, what):
    assert set(got) == set(want), (what, sorted(got), sorted(want))
    for key, expected in want.items():
        array = got[key]
        assert array.dtype == expected.dtype and array.shape == expected.shape, (what, key)
        assert array.tobytes() == expected.tobytes(), (what, key)


# --------------------------------------------------------------------------
# Clients
# --------------------------------------------------------------------------


def http_infer(client, name, names, inputs, binary=True):
    given = []
    for input_name, array in zip(names, inputs):
        item = tritonhttp.InferInput(input_name, list(array.shape), DATATYPES[array.dtype])
        item.set_data_from_numpy(array, binary_data=binary)
        given.append(item)
    result = client.infer(name, given)
    return {o["name"]: result.as_numpy(o["name"]) for o in result.get_response()["outputs"]}


def grpc_infer(client, name, names, inputs):
    given = []
    for input_name, array in zip(names, inputs):
        item = tritongrpc.InferInput(input_name, list(array.shape), DATATYPES[array.dtype])
        item.set_data_from_numpy(array)
        given.append(item)
    result = client.infer(name, given, client_timeout=60)
    return {o.name: result.as_numpy(o.name) for o in result.get_response().outputs}


def post(address, path, body, headers=None, timeout=60):
    """(status, parsed JSON or text) of one raw HTTP POST."""
    host, port = address.split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        connection.request("POST", path, body, headers or {})
        response = connection.getresponse()
        text = response.read().decode(errors="replace")
    finally:
        connection.close()
    try:
        return response.status, json.loads(text)
    except ValueError:
        return response.status, text


def served_models(process):
    """KServe's list of models (GET /v2/models: KServe has no repository index)."""
    with urllib.request.urlopen(f"http://{process.http}/v2/models", timeout=60) as response:
        return sorted(json.load(response)["models"])


def binary_body(inputs, declared=None, cut=0, shape=None):
    """A v2 body with binary data; ``declared`` overrides each input's
    binary_data_size, ``shape`` its shape, ``cut`` drops bytes from the end."""
    head = {
        "inputs": [
            {
                "name": name,
                "shape": list(array.shape) if shape is None else shape,
                "datatype": DATATYPES.get(array.dtype, "FP32"),
                "parameters": {"binary_data_size": array.nbytes if declared is None else declared},
            }
            for name, array in inputs
        ]
    }
    text = json.dumps(head).encode()
    body = text + b"".join(array.tobytes() for _, array in inputs)
    return body[: len(body) - cut], {"Inference-Header-Content-Length": str(len(text))}


def grpc_request(model, name, array, raw=None, datatype=None, shape=None):
    request = service_pb2.ModelInferRequest(model_name=model)
    tensor = request.inputs.add()
    tensor.name = name
    tensor.datatype = datatype or DATATYPES[array.dtype]
    tensor.shape.extend(array.shape if shape is None else shape)
    request.raw_input_contents.append(array.tobytes() if raw is None else raw)
    return request


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(ov_extension):
    with ServerProcess(EXAMPLES, env={"OVPOOL_MEMORY_BUDGET": BUDGET}) as process:
        yield process
        assert process.alive(), process.log()[-4000:]
        assert process.stop() == 0, process.log()[-4000:]


@pytest.fixture(scope="module")
def clients(server):
    http_client = tritonhttp.InferenceServerClient(server.http, network_timeout=60)
    grpc_client = tritongrpc.InferenceServerClient(server.grpc)
    yield http_client, grpc_client
    http_client.close()
    grpc_client.close()


def test_health_and_readiness(server, clients):
    http_client, grpc_client = clients
    for client in clients:
        assert client.is_server_live() and client.is_server_ready()
    for name in NAMES:
        assert http_client.is_model_ready(name) and grpc_client.is_model_ready(name)
    assert served_models(server) == NAMES
    assert not http_client.is_model_ready("nope")
    with pytest.raises(InferenceServerException, match="nope does not exist"):
        grpc_client.get_model_metadata("nope")


@pytest.mark.parametrize("name", NAMES)
def test_metadata_is_the_models(server, clients, reference, name):
    http_client, grpc_client = clients
    compiled = reference.model(name)

    def ports(ports):
        return [
            {
                "name": p.get_any_name(),
                "datatype": {"f32": "FP32", "f16": "FP16", "i32": "INT32", "i64": "INT64"}[
                    p.get_element_type().get_type_name()
                ],
                "shape": [d.get_length() if d.is_static else -1 for d in p.get_partial_shape()],
            }
            for p in ports
        ]

    over_http = http_client.get_model_metadata(name)
    over_grpc = grpc_client.get_model_metadata(name, as_json=True)
    for metadata in (over_http, over_grpc):
        for key, expected in (("inputs", compiled.inputs), ("outputs", compiled.outputs)):
            got = [{**p, "shape": [int(d) for d in p["shape"]]} for p in metadata[key]]
            assert got == ports(expected), (name, key)


@pytest.mark.parametrize("name", NAMES)
def test_every_example_over_http_and_grpc(server, clients, reference, name):
    """The recorded inputs of every example, over HTTP (binary data and
    JSON) and gRPC: native OpenVINO's result with ovpool's ops, bit for bit."""
    http_client, grpc_client = clients
    inputs = recorded_inputs(name)
    names = reference.input_names(name)
    want = reference.outputs(name, inputs)
    assert_same_bits(http_infer(http_client, name, names, inputs), want, (name, "http"))
    assert_same_bits(grpc_infer(grpc_client, name, names, inputs), want, (name, "grpc"))
    # JSON: no FP16 in the protocol, no NaN in JSON (a NaN output arrives as null)
    if all(a.dtype != np.float16 and np.isfinite(a).all() for a in inputs):
        got = http_infer(http_client, name, names, inputs, binary=False)
        for key, expected in want.items():
            assert np.array_equal(got[key], expected, equal_nan=True), (name, key, "json")


def test_dynamic_shapes(server, clients, reference):
    http_client, grpc_client = clients
    for seed in range(4):
        inputs = dynamic_inputs(seed)
        want = reference.outputs("dynamic_shape", inputs)
        assert_same_bits(http_infer(http_client, "dynamic_shape", ["x"], inputs), want, seed)
        assert_same_bits(grpc_infer(grpc_client, "dynamic_shape", ["x"], inputs), want, seed)


def test_requested_outputs_and_json(server, reference):
    inputs = recorded_inputs("chain")
    want = reference.outputs("chain", inputs)
    body = {
        "id": "r1",
        "inputs": [{"name": "x", "shape": list(inputs[0].shape), "datatype": "FP32"}],
        "outputs": [{"name": "indices"}],
    }
    body["inputs"][0]["data"] = inputs[0].ravel().tolist()
    status, answer = post(server.http, "/v2/models/chain/infer", json.dumps(body))
    assert status == 200, answer
    assert answer["id"] == "r1" and [o["name"] for o in answer["outputs"]] == ["indices"]
    (output,) = answer["outputs"]
    assert output["datatype"] == "INT32" and output["shape"] == list(want["indices"].shape)
    assert np.array_equal(np.array(output["data"], np.int32), want["indices"].ravel())


# (what, the request, the status, words the message must hold)
def http_hostile_requests():
    x = recorded_inputs("chain")[0]
    good_head = binary_body([("x", x)])
    json_ok = {"inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32"}]}
    json_ok["inputs"][0]["data"] = x.ravel().tolist()
    big = np.zeros(OVER_BUDGET, np.float32)

    def with_input(**change):
        body = json.loads(json.dumps(json_ok))
        body["inputs"][0].update(change)
        return json.dumps(body), {"Content-Type": "application/json"}

    return [
        ("unknown model", "nope", *good_head, 404, ["nope", "does not exist"]),
        ("unknown input", "chain", *with_input(name="y"), 400, ["no input named 'y'", "x (FP32"]),
        ("wrong datatype", "chain", *with_input(datatype="FP64"), 400, ["takes FP32", "FP64"]),
        ("wrong shape", "chain", *with_input(shape=[2, 4, 32]), 400, ["[2,4,32,30]", "[2,4,32]"]),
        ("too few values", "chain", *with_input(data=[1.0, 2.0]), 400, ["holds 2 values"]),
        ("not numbers", "chain", *with_input(data=["a"] * x.size), 400, ["not FP32"]),
        (
            "negative dim",
            "chain",
            *with_input(shape=[2, 4, -32, 30]),
            400,
            ["not a list of sizes"],
        ),
        (
            "binary data short of the shape",
            "chain",
            *binary_body([("x", x[:1])], shape=list(x.shape)),
            400,
            ["input 'x': 15360 bytes", "shape [2,4,32,30] of FP32 needs 30720"],
        ),
        (
            "binary data not whole elements",
            "chain",
            *binary_body([("x", x.view(np.uint8).reshape(-1)[:-2])], shape=list(x.shape)),
            400,
            ["30718 bytes", "needs 30720"],
        ),
        ("truncated body", "chain", *binary_body([("x", x)], cut=10), 400, ["truncated"]),
        (
            "bytes after the data",
            "chain",
            good_head[0] + b"xx",
            good_head[1],
            400,
            ["2 bytes follow"],
        ),
        (
            "binary data without the length header",
            "chain",
            good_head[0],
            {"Content-Type": "application/octet-stream"},
            400,
            ["not valid JSON"],
        ),
        (
            "a length header past the body",
            "chain",
            good_head[0],
            {"Inference-Header-Content-Length": str(len(good_head[0]) + 1)},
            400,
            ["JSON part"],
        ),
        (
            "malformed JSON",
            "chain",
            b'{"inputs": [{"name": "x", "sha',
            {"Content-Type": "application/json"},
            422,
            ["JSON"],
        ),
        (
            "malformed JSON part",
            "chain",
            b"{not json" + x.tobytes(),
            {"Inference-Header-Content-Length": "9"},
            400,
            ["not valid JSON"],
        ),
        (
            "unknown output",
            "chain",
            json.dumps({**json_ok, "outputs": [{"name": "zz"}]}),
            {"Content-Type": "application/json"},
            400,
            ["no output named 'zz'", "values (FP32"],
        ),
        (
            "shape past the model's bounds",
            "dynamic_shape",
            *binary_body([("x", np.zeros((1, 3, 40, 8), np.float32))]),
            400,
            ["[?,3,8..32,8..32]", "[1,3,40,8]"],
        ),
        (
            "over ovpool's memory budget",
            "dynamic_shape",
            *binary_body([("x", big)]),
            400,
            ["memory budget", "[2048,3,4,4]"],
        ),
    ]


HOSTILE = http_hostile_requests()


@pytest.mark.parametrize("case", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_bad_http_request_gets_4xx_and_the_server_goes_on(server, clients, reference, case):
    what, model, body, headers, status, words = case
    got, answer = post(server.http, f"/v2/models/{model}/infer", body, headers)
    assert got == status, (what, answer)
    assert all(w in json.dumps(answer) for w in words), (what, answer)
    inputs = recorded_inputs("chain")
    want = reference.outputs("chain", inputs)
    assert_same_bits(http_infer(clients[0], "chain", ["x"], inputs), want, what)


def grpc_hostile_requests():
    x = recorded_inputs("chain")[0]
    return [
        ("unknown model", grpc_request("nope", "x", x), grpc.StatusCode.NOT_FOUND, ["nope"]),
        (
            "unknown input",
            grpc_request("chain", "y", x),
            grpc.StatusCode.INVALID_ARGUMENT,
            ["no input named 'y'"],
        ),
        (
            "wrong datatype",
            grpc_request("chain", "x", x, datatype="INT32"),
            grpc.StatusCode.INVALID_ARGUMENT,
            ["takes FP32", "INT32"],
        ),
        (
            "wrong shape",
            grpc_request("chain", "x", x, shape=[4, 2, 32, 30]),
            grpc.StatusCode.INVALID_ARGUMENT,
            ["[2,4,32,30]", "[4,2,32,30]"],
        ),
        (
            "raw contents of the wrong length",
            grpc_request("chain", "x", x, raw=x.tobytes()[:-4]),
            grpc.StatusCode.INVALID_ARGUMENT,
            ["30716 bytes", "needs 30720"],
        ),
        (
            "over ovpool's memory budget",
            grpc_request("dynamic_shape", "x", np.zeros(OVER_BUDGET, np.float32)),
            grpc.StatusCode.INVALID_ARGUMENT,
            ["memory budget"],
        ),
    ]


GRPC_HOSTILE = grpc_hostile_requests()


def grpc_status(stub, request):
    try:
        stub(request, timeout=60)
    except grpc.RpcError as exc:
        return exc.code(), exc.details()
    return grpc.StatusCode.OK, ""


@pytest.mark.parametrize("case", GRPC_HOSTILE, ids=[c[0] for c in GRPC_HOSTILE])
def test_bad_grpc_request_is_refused_and_the_server_goes_on(server, clients, reference, case):
    what, request, status, words = case
    with grpc.insecure_channel(server.grpc) as channel:
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel).ModelInfer
        code, details = grpc_status(stub, request)
    assert code == status and all(w in details for w in words), (what, code, details)
    inputs = recorded_inputs("chain")
    want = reference.outputs("chain", inputs)
    assert_same_bits(grpc_infer(clients[1], "chain", ["x"], inputs), want, what)


def test_malformed_grpc_message_is_answered(server, clients, reference):
    """A body that is no protobuf message: gRPC's own decoder refuses it
    (UNKNOWN, before KServe sees a request) and the server goes on."""
    with grpc.insecure_channel(server.grpc) as channel:
        raw = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")
        code, details = grpc_status(raw, b"\xff\xff\xff not a message")
    assert code == grpc.StatusCode.UNKNOWN and "Error parsing message" in details
    inputs = recorded_inputs("chain")
    want = reference.outputs("chain", inputs)
    assert_same_bits(grpc_infer(clients[1], "chain", ["x"], inputs), want, "after garbage")


# --------------------------------------------------------------------------
# Under load
# --------------------------------------------------------------------------

LOAD_MODELS = [
    "chain",
    "cnn_openvino_route",
    "multi_output",
    "adaptive_max_pool_8_i64",
    "deviation_adaptive_max_pool_nan",
    "ovpool_opset_onnx",
    "max_pool_8",
    "dynamic_shape",
]
CLIENTS_PER_PROTOCOL = 8
REQUESTS_PER_CLIENT = 40
HOSTILE_EVERY = 5  # every fifth request of a client is a bad one


def test_under_load(server, reference):
    """8 HTTP and 8 gRPC clients at once, 40 requests each (every fifth a
    bad one): every answer right, every request answered, the server alive."""
    jobs = []
    for k in range(len(LOAD_MODELS) * 3):
        name = LOAD_MODELS[k % len(LOAD_MODELS)]
        inputs = dynamic_inputs(100 + k) if name == "dynamic_shape" else recorded_inputs(name)
        jobs.append((name, reference.input_names(name), inputs, reference.outputs(name, inputs)))
    results = {"right": 0, "wrong": [], "refused": 0, "lost": [], "latency": []}
    lock = threading.Lock()

    def record(key, value=None, seconds=None):
        with lock:
            if isinstance(results[key], list):
                results[key].append(value)
            else:
                results[key] += 1
            if seconds is not None:
                results["latency"].append(seconds)

    def client(protocol, c):
        if protocol == "http":
            triton = tritonhttp.InferenceServerClient(server.http, network_timeout=60)
        else:
            triton = tritongrpc.InferenceServerClient(server.grpc)
            channel = grpc.insecure_channel(server.grpc)
            stub = service_pb2_grpc.GRPCInferenceServiceStub(channel).ModelInfer
        try:
            for r in range(REQUESTS_PER_CLIENT):
                what = (protocol, c, r)
                start = time.perf_counter()
                try:
                    if r % HOSTILE_EVERY == HOSTILE_EVERY - 1:
                        if protocol == "http":
                            case = HOSTILE[(c * 7 + r) % len(HOSTILE)]
                            _, model, body, headers, status, words = case
                            path = f"/v2/models/{model}/infer"
                            got, answer = post(server.http, path, body, headers)
                            ok = got == status and all(w in json.dumps(answer) for w in words)
                        else:
                            case = GRPC_HOSTILE[(c * 7 + r) % len(GRPC_HOSTILE)]
                            _, request, status, words = case
                            got, answer = grpc_status(stub, request)
                            ok = got == status and all(w in answer for w in words)
                        if ok:
                            record("refused")
                        else:
                            record("wrong", (what, case[0], got, answer))
                        continue
                    name, names, inputs, want = jobs[(c * 11 + r) % len(jobs)]
                    if protocol == "http":
                        got = http_infer(triton, name, names, inputs)
                    else:
                        got = grpc_infer(triton, name, names, inputs)
                    try:
                        assert_same_bits(got, want, name)
                    except AssertionError as exc:
                        record("wrong", (what, name, str(exc)))
                    else:
                        record("right", seconds=time.perf_counter() - start)
                except Exception as exc:  # a request with no answer
                    record("lost", (what, repr(exc)))
        finally:
            triton.close()
            if protocol == "grpc":
                channel.close()

    threads = [
        threading.Thread(target=client, args=(protocol, c), daemon=True)
        for protocol in ("http", "grpc")
        for c in range(CLIENTS_PER_PROTOCOL)
    ]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    seconds = time.perf_counter() - start
    assert not any(t.is_alive() for t in threads), "clients still waiting after 120 s"
    sent = 2 * CLIENTS_PER_PROTOCOL * REQUESTS_PER_CLIENT
    latency = sorted(results["latency"])
    print(
        f"\nload: {sent} requests from {2 * CLIENTS_PER_PROTOCOL} clients in {seconds:.1f} s: "
        f"{results['right']} right, {results['refused']} bad ones refused, "
        f"{len(results['wrong'])} wrong, {len(results['lost'])} lost; good requests' "
        f"latency p50 {1e3 * latency[len(latency) // 2]:.1f} ms, "
        f"max {1e3 * latency[-1]:.1f} ms"
    )
    assert results["wrong"] == [] and results["lost"] == []
    assert results["right"] + results["refused"] == sent
    assert results["refused"] == sent // HOSTILE_EVERY
    assert server.alive()
    client = tritongrpc.InferenceServerClient(server.grpc)
    assert client.is_server_live() and client.is_server_ready()
    name, names, inputs, want = jobs[0]
    assert_same_bits(grpc_infer(client, name, names, inputs), want, "after the load")
    client.close()


# --------------------------------------------------------------------------
# ONNX, loading, folders
# --------------------------------------------------------------------------


def child_environment():
    """This process's environment, with the ovpool it imports first on the path."""
    env = dict(os.environ)
    root = str(Path(ovp.__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def test_onnx_model_under_the_model_name(tmp_path, ov_extension):
    """A folder holding one ONNX model, served under --model_name (as KServe
    runs a custom runtime) with the library's ONNX conversions: ONNX's
    ceil_mode and storage_order, as ONNX Runtime computes them."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from references import onnx_node_model

    x = np.random.default_rng(3).standard_normal((2, 3, 9, 7)).astype(np.float32)
    attrs = dict(
        kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, storage_order=1
    )
    model = onnx_node_model("MaxPool", [x], attrs, 2, opset=12, ir_version=8)
    onnx.save(model, tmp_path / "model.onnx")
    y, i = ort.InferenceSession(str(tmp_path / "model.onnx")).run(None, {"in0": x})
    with ServerProcess(tmp_path, "--model_name", "pool", "--policy", "all") as process:
        assert served_models(process) == ["pool"]
        client = tritongrpc.InferenceServerClient(process.grpc)
        got = grpc_infer(client, "pool", ["in0"], [x])
        client.close()
    assert got["out0"].tobytes() == y.tobytes()
    assert got["out1"].dtype == np.int64 and np.array_equal(got["out1"], i)


LOAD_ERRORS = """
import json, sys
from ovpool.serve import ModelLoadError, load_models
messages = []
for folder, policy in json.loads(sys.argv[1]):
    try:
        models = load_models(folder, policy=policy)
    except ModelLoadError as exc:
        messages.append(str(exc))
    else:
        messages.append([(m.name, m.on_ovpool, m.ready) for m in models])
print(json.dumps(messages))
"""


def test_load_errors_name_the_model(tmp_path, ov_extension):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bad.xml").write_text("<net><layers")
    native = tmp_path / "native"
    native.mkdir()
    for suffix in (".xml", ".bin"):
        name = "adaptive_max_pool_8_i64" + suffix
        (native / name).write_bytes((EXAMPLES / name).read_bytes())
    plan = [(str(broken), "default"), (str(native), "native"), (str(native), "default")]
    result = subprocess.run(
        [sys.executable, "-c", LOAD_ERRORS, json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=300,
        env=child_environment(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    unreadable, uncompilable, on_ovpool = json.loads(result.stdout.splitlines()[-1])
    assert "model 'bad' (" in unreadable and "could not be read" in unreadable
    assert "malformed XML" in unreadable
    # native OpenVINO's CPU plugin cannot compile AdaptiveMaxPool's i64 indices
    assert "model 'adaptive_max_pool_8_i64'" in uncompilable
    assert "OpenVINO could not compile it" in uncompilable and "i64" in uncompilable
    assert on_ovpool == [["adaptive_max_pool_8_i64", 1, True]]  # on ovpool's op it compiles


def test_find_models(tmp_path):
    for name in ("a.xml", "b.onnx", "c.npz", "a.bin"):
        (tmp_path / name).write_bytes(b"")
    assert find_models(tmp_path) == {"a": tmp_path / "a.xml", "b": tmp_path / "b.onnx"}
    assert find_models(tmp_path, "b") == {"b": tmp_path / "b.onnx"}
    assert find_models(tmp_path / "a.xml", "m") == {"m": tmp_path / "a.xml"}
    with pytest.raises(ModelLoadError, match="no model named 'm' among the 2"):
        find_models(tmp_path, "m")
    (tmp_path / "a.onnx").write_bytes(b"")
    with pytest.raises(ModelLoadError, match="two models named 'a'"):
        find_models(tmp_path)
    single = tmp_path / "single"
    single.mkdir()
    (single / "model.xml").write_bytes(b"")
    assert find_models(single, "resnet") == {"resnet": single / "model.xml"}
    with pytest.raises(ModelLoadError, match="not a model file"):
        find_models(tmp_path / "c.npz")
    with pytest.raises(ModelLoadError, match="no folder or model file"):
        find_models(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelLoadError, match="no model"):
        find_models(empty)


def test_the_command_refuses_a_model_it_cannot_compile(tmp_path, ov_extension):
    for suffix in (".xml", ".bin"):
        name = "adaptive_max_pool_8_i64" + suffix
        (tmp_path / name).write_bytes((EXAMPLES / name).read_bytes())
    argv = [sys.executable, "-m", "ovpool.serve", "--model_dir", str(tmp_path)]
    result = subprocess.run(
        argv + ["--policy", "native"],
        capture_output=True,
        text=True,
        timeout=300,
        env=child_environment(),
    )
    assert result.returncode == 1
    assert "error: model 'adaptive_max_pool_8_i64'" in result.stderr
    assert "could not compile" in result.stderr


def test_ovpool_does_not_import_kserve():
    code = (
        "import sys, ovpool, ovpool.openvino, ovpool.ir, ovpool.cli, ovpool.serve\n"
        "names = ('kserve', 'tritonclient', 'fastapi', 'grpc')\n"
        "print(sorted(m for m in names if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_environment(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
