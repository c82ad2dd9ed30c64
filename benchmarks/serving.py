"""Serving: ``python -m ovpool.serve`` under concurrent clients, the models
on ovpool's extension and natively, side by side.

Two servers run at once on loopback, on the same models: one with ovpool's
extension (``--policy default``), one plain OpenVINO (``--policy native``),
both compiled with the server's throughput settings. For 1, 4 and 16
clients (threads of this process, one ``tritonclient.grpc`` client each,
each sending its requests one after another with binary tensors), every
round times one block per server in a shuffled order: all clients start
together and send a fixed number of requests. Reported per model, server
and client count: throughput (requests per second of a block, the median
over the rounds) and the latency of a request at p50 and p99 (over every
request of the rounds), in ms. Before timing, each server's answer is
compared with the other's (they must agree bit for bit).

The models: ``maxpool_indices`` (MaxPool-8 3x3, stride 2, pad 1, with its
indices read, on 1x64x56x56: native OpenVINO runs it on its single-threaded
reference, the default policy moves it onto ovpool) and
``adaptive_avg_pool_8`` from ``ir_examples/`` (2x3x13x11 to 5x7: a tiny
model, where the server's own cost is what is measured).

The clients share the machine's CPUs with the servers: on 2 vCPUs the
figures are what one machine serving itself gets, not a network's.

    python benchmarks/run.py --serving            # about 2 minutes
"""

from __future__ import annotations

import json
import math
import platform
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

CLIENTS = (1, 4, 16)
SYSTEMS = ("ovpool", "native")
REQUESTS_PER_BLOCK = 48  # split among the clients (at least 3 each)
EXAMPLES = Path(__file__).resolve().parent.parent / "ir_examples"


def _models(folder):
    """Write the models into ``folder``; {name: (input name, input array)}."""
    import openvino as ov
    import openvino.opset8 as o8

    x = o8.parameter([1, 64, 56, 56], np.float32, name="x")
    pool = o8.max_pool(x, [2, 2], [1, 1], [1, 1], [1, 1], [3, 3], index_element_type="i64")
    pool.output(0).get_tensor().set_names({"values"})
    pool.output(1).get_tensor().set_names({"indices"})
    model = ov.Model([o8.result(pool.output(0)), o8.result(pool.output(1))], [x])
    ov.save_model(model, str(folder / "maxpool_indices.xml"))
    for suffix in (".xml", ".bin"):
        name = "adaptive_avg_pool_8" + suffix
        (folder / name).write_bytes((EXAMPLES / name).read_bytes())
    rng = np.random.default_rng(0)
    return {
        "maxpool_indices": ("x", rng.standard_normal((1, 64, 56, 56)).astype(np.float32)),
        "adaptive_avg_pool_8": ("x", rng.standard_normal((2, 3, 13, 11)).astype(np.float32)),
    }


def _infer(client, model, name, x):
    import tritonclient.grpc as tg

    given = tg.InferInput(name, list(x.shape), "FP32")
    given.set_data_from_numpy(x)
    result = client.infer(model, [given], client_timeout=120)
    return [result.as_numpy(o.name) for o in result.get_response().outputs]


def _block(address, model, name, x, clients):
    """All clients at once, REQUESTS_PER_BLOCK requests in all: (wall seconds,
    requests, latencies in s)."""
    import tritonclient.grpc as tg

    each = max(3, REQUESTS_PER_BLOCK // clients)
    connections = [tg.InferenceServerClient(address) for _ in range(clients)]
    barrier = threading.Barrier(clients + 1)
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def run(client):
        barrier.wait()
        mine = []
        try:
            for _ in range(each):
                start = time.perf_counter()
                _infer(client, model, name, x)
                mine.append(time.perf_counter() - start)
        except Exception as exc:
            errors.append(repr(exc))
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=run, args=(c,)) for c in connections]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    for connection in connections:
        connection.close()
    if errors:
        raise RuntimeError(f"{model}: {errors[0]}")
    return wall, each * clients, latencies


def _percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def run(rounds=3, seed=0):
    """The measurements: a list of rows (model, clients, per system)."""
    from ovpool.serve._launch import ServerProcess

    rng = random.Random(seed)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ovpool-serving-") as tmp:
        folder = Path(tmp)
        inputs = _models(folder)
        with (
            ServerProcess(folder, "--policy", "default") as ovpool_server,
            ServerProcess(folder, "--policy", "native") as native_server,
        ):
            servers = {"ovpool": ovpool_server.grpc, "native": native_server.grpc}
            import tritonclient.grpc as tg

            for model, (name, x) in inputs.items():
                answers = {}
                for system, address in servers.items():
                    client = tg.InferenceServerClient(address)
                    answers[system] = _infer(client, model, name, x)
                    client.close()
                agree = all(
                    a.dtype == b.dtype and a.tobytes() == b.tobytes()
                    for a, b in zip(answers["ovpool"], answers["native"])
                )
                for clients in CLIENTS:
                    row = {"model": model, "clients": clients, "agree": agree, "systems": {}}
                    walls = {s: [] for s in SYSTEMS}
                    lat = {s: [] for s in SYSTEMS}
                    for system in SYSTEMS:  # warm-up: connections, first calls
                        _block(servers[system], model, name, x, clients)
                    for _ in range(rounds):
                        order = list(SYSTEMS)
                        rng.shuffle(order)
                        for system in order:
                            wall, count, latencies = _block(
                                servers[system], model, name, x, clients
                            )
                            walls[system].append(count / wall)
                            lat[system].extend(latencies)
                    for system in SYSTEMS:
                        row["systems"][system] = {
                            "throughput_rps": statistics.median(walls[system]),
                            "p50_ms": 1e3 * _percentile(lat[system], 0.50),
                            "p99_ms": 1e3 * _percentile(lat[system], 0.99),
                            "requests": len(lat[system]),
                        }
                    rows.append(row)
    return rows


def markdown(rows):
    lines = [
        "| model | clients | ovpool req/s | native req/s | ovpool / native throughput "
        "| ovpool p50 ms | native p50 ms | ovpool p99 ms | native p99 ms | same answer |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        o, n = row["systems"]["ovpool"], row["systems"]["native"]
        lines.append(
            f"| {row['model']} | {row['clients']} | {o['throughput_rps']:.1f} | "
            f"{n['throughput_rps']:.1f} | {o['throughput_rps'] / n['throughput_rps']:.2f} | "
            f"{o['p50_ms']:.2f} | {n['p50_ms']:.2f} | {o['p99_ms']:.2f} | {n['p99_ms']:.2f} | "
            f"{'yes' if row['agree'] else 'NO'} |"
        )
    return "\n".join(lines)


def main(out, name=None, rounds=3, seed=0, machine=None):
    started = time.strftime("%Y%m%d-%H%M%S")
    start = time.perf_counter()
    rows = run(rounds=rounds, seed=seed)
    report = {
        "group": "serving",
        "started": started,
        "seconds": round(time.perf_counter() - start, 1),
        "rounds": rounds,
        "requests_per_block": REQUESTS_PER_BLOCK,
        "transport": "gRPC (tritonclient), binary tensors, loopback",
        "python": platform.python_version(),
        "machine": machine,
        "results": rows,
    }
    path = Path(out) / f"{name or 'serving-' + started}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, default=str))
    print(markdown(rows))
    print(f"{report['seconds']} s; wrote {path}")
    return 0 if all(row["agree"] for row in rows) else 1
