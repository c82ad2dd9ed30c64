"""A fuzzing worker: a child process that runs cases until its stdin closes.

Started by :mod:`tools.fuzz.runner` as ``python -m tools.fuzz.worker MODE
HEADROOM_MIB`` (MODE ``api``, ``ir``, ``openvino`` or one of the library's,
``lib-ir``, ``native-ir``, ``lib-onnx``, ``native-onnx``, ``ort``: those
import OpenVINO or ONNX Runtime, never ovpool). It imports what its cases
need, then limits its address space to what it uses at that point plus
``HEADROOM_MIB`` (``resource.RLIMIT_AS``), so a case that asks for more
memory ends in a MemoryError (or a refusal) inside this process, never in the
OOM killer. It reads one JSON request per line on stdin and writes one JSON
result per line to the file descriptor it had as stdout; its own fd 1 is sent
to stderr, so that anything a library prints cannot garble the protocol.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import warnings

# the modes of tools.fuzz.cases_lib (named here: the worker imports a case
# module only once it knows its mode)
LIBRARY_MODES = ("lib-ir", "native-ir", "lib-onnx", "native-onnx", "ort")


def _vm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _selftest(index):
    """Cases whose outcome is known, to test the runner's classification:
    0 ok, 1 a signal, 2 an exit, 3 a hang, 4 a MemoryError under the limit."""
    if index == 1:
        os.abort()
    if index == 2:
        sys.stderr.write("selftest: exiting with status 3\n")
        sys.stderr.flush()
        os._exit(3)
    if index == 3:
        time.sleep(3600)
    if index == 4:
        try:
            bytearray(1 << 40)
        except MemoryError:
            return "memory", "MemoryError"
        return "ok", "allocated 1 TiB"
    return "ok", ""


def main():
    mode, headroom_mib = sys.argv[1], int(sys.argv[2])
    tmp = sys.argv[3] if len(sys.argv) > 3 else None
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    warnings.simplefilter("ignore")

    import numpy as np  # noqa: F401

    if mode == "selftest":
        cases = None
    elif mode == "api":
        import ml_dtypes  # noqa: F401
        import torch

        torch.set_num_threads(1)
        from . import cases_api as cases
    elif mode == "ir":
        import ovpool.ir

        from . import cases_ir as cases
    elif mode in LIBRARY_MODES:
        # OpenVINO and the library alone, as OpenVINO's own programs load it
        from . import cases_lib as cases

        cases.setup(mode)
        if "ovpool" in sys.modules:
            raise RuntimeError(f"the {mode} worker imported ovpool")
    else:
        from . import cases_ir as cases

        cases._core()
    if mode not in LIBRARY_MODES:
        import ovpool  # noqa: F401

    limit = _vm_bytes() + (headroom_mib << 20)
    if headroom_mib > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    protocol.write(
        json.dumps({"ready": True, "rss_mib": _rss_mib(), "vm_mib": _vm_bytes() / 2**20}) + "\n"
    )
    for line in sys.stdin:
        request = json.loads(line)
        seed, index = request["seed"], request["index"]
        start = time.perf_counter()
        before = _rss_mib()
        extra = {}
        if mode == "selftest":
            cls, detail = _selftest(index)
        elif mode == "api":
            try:
                case = cases.make_case(seed, index, request.get("known_open", False))
            except Exception as exc:  # a defect of the fuzzer, not ovpool's
                protocol.write(
                    json.dumps(
                        {"index": index, "cls": "fuzzer", "detail": repr(exc)[:300], "seconds": 0}
                    )
                    + "\n"
                )
                continue
            extra["known_open"] = case.known_open
            cls, detail, checked = cases.run_case(case)
            extra["checked"] = checked
        elif mode in LIBRARY_MODES:
            try:
                cls, detail, extra = cases.run_case(mode, seed, index, tmp)
            except Exception as exc:  # a defect of the fuzzer, not ovpool's
                cls, detail = "fuzzer", repr(exc)[:300]
        else:
            try:
                base, xml, blob, _ = cases.make_case(seed, index)
            except Exception as exc:  # a defect of the fuzzer, not ovpool's
                protocol.write(
                    json.dumps(
                        {"index": index, "cls": "fuzzer", "detail": repr(exc)[:300], "seconds": 0}
                    )
                    + "\n"
                )
                continue
            stem = f"{mode}-{seed}-{index}"
            path = cases.write_case(tmp, stem, xml, blob)
            saved = os.path.join(tmp, f"ir-{seed}-{index}.npz")
            try:
                if mode == "ir":
                    cls, detail = cases.run_ovpool(path, seed, index, save=saved)
                else:
                    cls, detail, comparison = cases.run_openvino(path, saved)
                    extra["comparison"] = comparison
            finally:
                for suffix in (".xml", ".bin"):
                    try:
                        os.remove(path[:-4] + suffix)
                    except OSError:
                        pass
        result = {
            "index": index,
            "cls": cls,
            "detail": detail,
            "seconds": time.perf_counter() - start,
            "rss_growth_mib": _rss_mib() - before,
        }
        result.update(extra)
        protocol.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
