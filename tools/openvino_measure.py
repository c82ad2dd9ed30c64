"""Measure ovpool's OpenVINO extension: threads inside evaluate, and overhead.

    python tools/openvino_measure.py threads    # thread settings x wait policies
    python tools/openvino_measure.py overhead   # per-inference cost vs the native op

Each configuration runs in its own process (OMP_WAIT_POLICY / GOMP_SPINCOUNT
are read when libgomp starts); configurations are interleaved over rounds and
the median of the per-round medians is printed, with the CPU share other
processes used during the run (the machine this was written on is shared and
noisy: read the numbers as ratios within one table). Needs openvino (and
torch for the ``+torch`` rows).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# --------------------------------------------------------------------------
# child: one configuration
# --------------------------------------------------------------------------

def _busy_jiffies():
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def _child(cfg):
    if cfg.get("torch"):
        import torch
    sys.path.insert(0, ROOT)
    import numpy as np
    import openvino as ov
    import openvino.opset8 as o8

    import ovpool.openvino as ovp

    if cfg.get("threads") not in (None, "auto", "native op"):
        ovp.set_num_threads(int(cfg["threads"]))
    core = ovp.register(ov.Core())
    kind, shape = cfg["op"], cfg["shape"]
    x = o8.parameter(shape, np.float32)
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    src = o8.relu(x).output(0) if cfg.get("around") else x.output(0)

    def pool(source):
        if kind == "adaptive_avg":
            size = o8.constant(np.array(cfg["size"], np.int64)).output(0)
            if cfg.get("native"):
                return o8.adaptive_avg_pool(source, size).output(0)
            return ovp.AdaptiveAvgPool([source, size]).output(0)
        if kind == "max_pool":
            k, s, p = cfg["kernel"], cfg["stride"], cfg["pad"]
            if cfg.get("native"):
                node = o8.max_pool(source, [s] * 2, [1, 1], [p] * 2, [p] * 2, [k] * 2)
            else:
                node = ovp.MaxPool([source], kernel=[k] * 2, strides=[s] * 2, pads_begin=[p] * 2,
                                   pads_end=[p] * 2)
            return node.outputs() if cfg.get("indices") else node.output(0)
        raise SystemExit(f"unknown op {kind}")

    def build():
        y = pool(src)
        extra = []
        if isinstance(y, list):                 # MaxPool values and indices, both read
            y, extra = y[0], [o8.result(y[1])]
        if cfg.get("around"):
            y = o8.relu(y).output(0)
        return ov.Model([o8.result(y)] + extra, [x])

    if cfg.get("compare"):                      # native and ovpool, interleaved in blocks
        requests = {}
        for variant in ("native", "ovpool"):
            cfg["native"] = variant == "native"
            compiled = core.compile_model(build(), "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                           "PERFORMANCE_HINT": "LATENCY"})
            requests[variant] = compiled.create_infer_request()
        samples = {variant: [] for variant in requests}
        block = max(1, cfg["repeat"] // 20)
        for request in requests.values():
            for _ in range(min(block, 20)):
                request.infer([data], share_inputs=True)
        for _ in range(20):
            for variant, request in requests.items():
                for _ in range(block):
                    start = time.perf_counter()
                    request.infer([data], share_inputs=True)
                    samples[variant].append(time.perf_counter() - start)
        print(json.dumps({f"{v}_ms": 1000 * sorted(t)[len(t) // 2] for v, t in samples.items()}))
        return

    model = build()
    config = {"INFERENCE_PRECISION_HINT": "f32"}
    streams = cfg.get("streams", 1)
    if streams > 1:
        config["NUM_STREAMS"] = str(streams)
    else:
        config["PERFORMANCE_HINT"] = "LATENCY"
    compiled = core.compile_model(model, "CPU", config)
    busy0, total0 = _busy_jiffies()
    own0 = time.process_time()
    times = []
    if streams > 1:
        queue = ov.AsyncInferQueue(compiled, 2 * streams)
        batch = cfg.get("batch", 48)
        for _ in range(max(1, cfg["repeat"] // batch) + 1):
            start = time.perf_counter()
            for _ in range(batch):
                queue.start_async([data])
            queue.wait_all()
            times.append((time.perf_counter() - start) / batch)
        times = times[1:]
    else:
        request = compiled.create_infer_request()
        for _ in range(5):
            request.infer([data])
        for _ in range(cfg["repeat"]):
            if cfg.get("torch"):
                torch.relu(torch.from_numpy(data))      # torch's OpenMP team between calls
            start = time.perf_counter()
            request.infer([data], share_inputs=True)
            times.append(time.perf_counter() - start)
    busy1, total1 = _busy_jiffies()
    own = time.process_time() - own0
    hz = os.sysconf("SC_CLK_TCK")
    cpus = os.cpu_count() or 1
    wall_cpu = (total1 - total0) / hz                  # CPU-seconds of all cores
    other = max(0.0, (busy1 - busy0) / hz - own) / max(wall_cpu, 1e-9)
    times.sort()
    print(json.dumps(dict(median_ms=1000 * times[len(times) // 2], other_cpu=other,
                          cpus=cpus)))


def _run(cfg, env_extra):
    env = dict(os.environ)
    for key in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        env.pop(key, None)
    env.update(env_extra)
    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(cfg)], env=env,
                         capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _table(rows, rounds):
    results = {name: [] for name, _, _ in rows}
    other = {name: [] for name, _, _ in rows}
    for _ in range(rounds):
        for name, cfg, env in rows:
            r = _run(cfg, env)
            results[name].append(r["median_ms"])
            other[name].append(r["other_cpu"])
    for name, _, _ in rows:
        values = sorted(results[name])
        print(f"  {name:58s} {values[len(values) // 2]:8.3f} ms   "
              f"(rounds: {', '.join(f'{v:.3f}' for v in results[name])}; "
              f"other processes {100 * max(other[name]):.0f}% CPU at most)")
    sys.stdout.flush()


OPS = {
    "adaptive 8x512x28x28->7x7": dict(op="adaptive_avg", shape=[8, 512, 28, 28], size=[7, 7]),
    "maxpool 8x64x56x56 k3s2p1": dict(op="max_pool", shape=[8, 64, 56, 56], kernel=3, stride=2,
                                      pad=1),
}


def threads(rounds, repeat, ops=tuple(OPS)):
    policies = {"default": {}, "OMP_WAIT_POLICY=PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE"}}
    for op_name in ops:
        op = OPS[op_name]
        print(f"{op_name}, Relu -> op -> Relu, median ms per inference")
        rows = []
        for scenario, extra in (("1 stream, sync", dict(streams=1)),
                                ("2 streams, async", dict(streams=2))):
            for torch_ in (False, True):
                for th in ("native op", "auto", "2"):
                    for pname, env in policies.items():
                        cfg = dict(op, around=True, threads=th, torch=torch_, repeat=repeat,
                                   native=th == "native op", **extra)
                        what = "native op" if th == "native op" else f"ovpool threads={th}"
                        name = f"{scenario}, {what}, {pname}{', +torch' if torch_ else ''}"
                        rows.append((name, cfg, env))
        _table(rows, rounds)


def overhead(rounds, repeat):
    cases = [("1x1x1x1 adaptive avg -> 1", dict(op="adaptive_avg", shape=[1, 1, 1, 1],
                                                size=[1, 1])),
             ("1x64x56x56 maxpool k3s2p1", dict(op="max_pool", shape=[1, 64, 56, 56], kernel=3,
                                                stride=2, pad=1)),
             ("8x64x56x56 maxpool k3s2p1", OPS["maxpool 8x64x56x56 k3s2p1"]),
             ("8x512x28x28 adaptive avg -> 7x7", OPS["adaptive 8x512x28x28->7x7"]),
             ("8x64x56x56 maxpool k3s2p1 with indices", dict(OPS["maxpool 8x64x56x56 k3s2p1"],
                                                             indices=True))]
    print("median ms per inference; native and ovpool interleaved in one process per round")
    for name, op in cases:
        n = repeat * (10 if op["shape"] == [1, 1, 1, 1] else 1) // (10 if op.get("indices")
                                                                      else 1)
        native, ovpool = [], []
        for _ in range(rounds):
            r = _run(dict(op, compare=True, repeat=n), {})
            native.append(r["native_ms"])
            ovpool.append(r["ovpool_ms"])
        mid = lambda v: sorted(v)[len(v) // 2]      # noqa: E731
        print(f"  {name:42s} native {mid(native):8.3f}  ovpool {mid(ovpool):8.3f}  "
              f"(ovpool - native {1000 * (mid(ovpool) - mid(native)):+.0f} us; rounds native "
              f"{', '.join(f'{v:.3f}' for v in native)}; ovpool "
              f"{', '.join(f'{v:.3f}' for v in ovpool)})")
        sys.stdout.flush()


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(json.loads(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("threads", "overhead"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--op", choices=tuple(OPS), action="append",
                        help="threads: only these ops (default: all)")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    if args.what == "threads":
        threads(args.rounds, args.repeat, tuple(args.op or OPS))
    else:
        overhead(args.rounds, args.repeat)


if __name__ == "__main__":
    main()
