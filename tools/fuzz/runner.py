"""Run fuzz cases in child processes and classify every outcome.

Each worker (:mod:`tools.fuzz.worker`) runs many cases one after the other
under an address-space limit. The parent hands out one case at a time per
worker and waits for its result with a timeout:

* a result line: the case's own class (ok, ovpool-error, ...);
* the worker dies (a signal, or an exit such as libgomp's ``exit(1)``): the
  case is run again alone in a fresh worker; ``crash`` if it dies again,
  ``crash-flaky`` if not;
* no result within the timeout: ``hang``; the worker is killed by its pid and
  replaced.

A worker's stderr goes to a file, whose tail is kept for a crash.
"""

from __future__ import annotations

import collections
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

from .cases_ir import ROOT


@dataclass
class Outcome:
    kind: str  # "api", "ir", "openvino" or a mode of tools.fuzz.cases_lib
    seed: int
    index: int
    cls: str
    detail: str = ""
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def replay(self):
        kind = {
            "openvino": "ir",
            "native-ir": "lib-ir",
            "native-onnx": "lib-onnx",
            "ort": "lib-onnx",
        }.get(self.kind, self.kind)
        flag = " --known-open" if self.extra.get("known_open_run") and kind == "api" else ""
        return f"python -m tools.fuzz --replay {kind}:{self.seed}:{self.index}{flag}"


class _Worker:
    def __init__(self, mode, headroom_mib, tmp, env, number):
        self.mode = mode
        self.log_path = os.path.join(tmp, f"worker-{mode}-{number}.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tools.fuzz.worker", mode, str(headroom_mib), tmp],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=ROOT,
            env=env,
        )
        self.buffer = b""
        self.case = None  # (index, retry, started)
        self.ready = False
        self.info = {}

    def send(self, request):
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()

    def read_lines(self):
        """Complete lines available now, or None at end of file."""
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        if not chunk:
            return None
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]

    def death(self):
        """A description of how the worker ended (after it did)."""
        code = self.proc.wait()
        if code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exited with status {code}"
        return how + self.stderr_tail()

    def stderr_tail(self):
        if not self.log.closed:
            self.log.flush()
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log_path) - 600))
                tail = f.read().decode("utf-8", "replace").strip().splitlines()
        except OSError:
            return ""
        tail = [t for t in tail if t.strip()][-3:]
        return (": " + " | ".join(tail)) if tail else ""

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()  # this worker only, by its pid
        self.proc.wait()
        self.close()

    def close(self):
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self.log.close()


def run(
    mode,
    seed,
    indices,
    *,
    jobs=1,
    timeout=20.0,
    headroom_mib=768,
    budget="256M",
    known_open=False,
    tmp,
    progress=None,
    library=None,
):
    """Run the cases ``indices`` of ``mode`` and return a list of :class:`Outcome`
    (``library``: the extension library the library's modes load)."""
    env = dict(os.environ)
    env["OVPOOL_MEMORY_BUDGET"] = budget
    env.pop("OVPOOL_OPENVINO_POLICY", None)
    if library is not None:
        env["OVPOOL_OPENVINO_EXTENSION"] = str(library)
    env["MALLOC_ARENA_MAX"] = "2"
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("OVPOOL_NUM_THREADS", None)
    pending = collections.deque((i, False) for i in indices)
    outcomes = []
    workers = []
    numbers = iter(range(1 << 30))
    selector = selectors.DefaultSelector()
    ready_timeout = 120.0
    info = {"worker_rss_mib": 0.0, "worker_vm_mib": 0.0, "restarts": 0}

    def start():
        w = _Worker(mode, headroom_mib, tmp, env, next(numbers))
        w.started = time.monotonic()
        selector.register(w.proc.stdout, selectors.EVENT_READ, w)
        workers.append(w)
        return w

    def retire(w):
        selector.unregister(w.proc.stdout)
        workers.remove(w)

    def dispatch(w):
        if not pending:
            return
        index, retry = pending.popleft()
        w.case = (index, retry, time.monotonic())
        w.send({"seed": seed, "index": index, "known_open": known_open})

    def record(outcome):
        outcome.extra["known_open_run"] = known_open
        outcomes.append(outcome)
        if progress:
            progress(outcome)

    for _ in range(min(jobs, len(pending)) or 1):
        start()
    try:
        while pending or any(w.case for w in workers):
            now = time.monotonic()
            deadlines = []
            for w in workers:
                if w.case:
                    deadlines.append(w.case[2] + timeout)
                elif not w.ready:
                    deadlines.append(w.started + ready_timeout)
            wait = max(0.0, min(deadlines) - now) if deadlines else 1.0
            events = selector.select(timeout=wait)
            for key, _ in events:
                w = key.data
                lines = w.read_lines()
                if lines is None:  # the worker died
                    how = w.death()
                    retire(w)
                    info["restarts"] += 1
                    if w.case:
                        index, retry, started = w.case
                        if retry:
                            record(
                                Outcome(mode, seed, index, "crash", how, time.monotonic() - started)
                            )
                        else:
                            # run it again alone, in a fresh worker, to isolate it
                            pending.appendleft((index, True))
                            outcomes.append(Outcome(mode, seed, index, "_crashed", how))
                    elif not w.ready:
                        raise RuntimeError(f"a {mode} worker failed to start: {how}")
                    w.close()
                    if pending:
                        start()
                    continue
                for message in lines:
                    if message.get("ready"):
                        w.ready = True
                        info["worker_rss_mib"] = max(info["worker_rss_mib"], message["rss_mib"])
                        info["worker_vm_mib"] = max(info["worker_vm_mib"], message["vm_mib"])
                        dispatch(w)
                        continue
                    index, retry, started = w.case
                    extra = {
                        k: v
                        for k, v in message.items()
                        if k not in ("index", "cls", "detail", "seconds")
                    }
                    cls = message["cls"]
                    if retry:
                        first = next(
                            o
                            for o in reversed(outcomes)
                            if o.index == index and o.cls == "_crashed"
                        )
                        outcomes.remove(first)
                        extra["alone"] = cls
                        cls, message["detail"] = "crash-flaky", first.detail
                    record(
                        Outcome(
                            mode, seed, index, cls, message["detail"], message["seconds"], extra
                        )
                    )
                    w.case = None
                    dispatch(w)
            now = time.monotonic()
            for w in list(workers):
                late = (w.case and now > w.case[2] + timeout) or (
                    not w.ready and now > w.started + ready_timeout
                )
                if late:
                    retire(w)
                    w.kill()
                    info["restarts"] += 1
                    if w.case:
                        index, retry, started = w.case
                        record(
                            Outcome(
                                mode,
                                seed,
                                index,
                                "hang",
                                f"no result within {timeout:g} s{w.stderr_tail()}",
                                now - started,
                            )
                        )
                    elif not w.ready:
                        raise RuntimeError(
                            f"a {mode} worker did not start within "
                            f"{ready_timeout:g} s{w.stderr_tail()}"
                        )
                    if pending:
                        start()
            if not workers and pending:
                start()
    finally:
        for w in list(workers):
            try:
                w.proc.stdin.close()
            except OSError:
                pass
            try:
                w.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                w.kill()
            w.close()
    outcomes = [o for o in outcomes if o.cls != "_crashed"]
    return outcomes, info
