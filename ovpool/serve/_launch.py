"""``python -m ovpool.serve`` in a child process on free loopback ports, for
the tests and the benchmark: started, waited for until it is ready, and
stopped (SIGTERM, then SIGKILL) when the ``with`` block ends."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import ovpool

HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port free on loopback now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class ServerProcess:
    """The server on ``model_dir`` with ``options`` (``--policy all``, ...);
    ``env`` is added to this process's environment. ``http`` and ``grpc``
    are its ``host:port`` addresses on loopback; ``log()`` what it printed."""

    def __init__(self, model_dir, *options, env=None, ready_timeout=180.0):
        self.model_dir = str(model_dir)
        self.options = [str(o) for o in options]
        self.env = dict(env or {})
        self.ready_timeout = ready_timeout
        self.process: subprocess.Popen | None = None
        self._log = None

    # the child imports the same ovpool as this process (a checkout, an install)
    def _environment(self):
        env = dict(os.environ)
        env.update(self.env)
        root = str(Path(ovpool.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        return env

    def start(self):
        for _attempt in range(3):  # a port taken between free_port() and the bind: again
            self.http_port, self.grpc_port = free_port(), free_port()
            self._log = tempfile.TemporaryFile(mode="w+b")
            argv = [sys.executable, "-m", "ovpool.serve", "--model_dir", self.model_dir]
            argv += ["--http_port", str(self.http_port), "--grpc_port", str(self.grpc_port)]
            argv += ["--enable_latency_logging", "false", *self.options]
            self.process = subprocess.Popen(
                argv,
                env=self._environment(),
                stdout=self._log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            if self._wait_ready():
                return self
            if "address already in use" not in self.log().lower():
                break
        log = self.log()
        self.stop()
        raise RuntimeError(f"ovpool.serve did not become ready:\n{log[-4000:]}")

    def _wait_ready(self):
        assert self.process is not None
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"http://{self.http}/v2/health/ready", timeout=2) as r:
                    if r.status == 200 and self._grpc_listening():
                        return True
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        return False

    def _grpc_listening(self):
        try:
            with socket.create_connection((HOST, self.grpc_port), timeout=2):
                return True
        except OSError:
            return False

    @property
    def http(self) -> str:
        return f"{HOST}:{self.http_port}"

    @property
    def grpc(self) -> str:
        return f"{HOST}:{self.grpc_port}"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def stop(self, timeout=20.0):
        """SIGTERM (KServe's server stops its HTTP and gRPC servers), SIGKILL
        if it has not exited after ``timeout`` seconds; the exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        if self._log is not None:
            self._log.close()
