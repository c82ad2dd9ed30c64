"""ovpool's fuzzer: hostile IR files and API calls, each in a limited child process.

::

    python -m tools.fuzz --ir 20000 --api 20000 --openvino --seed 1 --jobs 2

* ``--ir N``: N structure-aware mutants of ``ir_examples/`` read and run by
  ``ovpool.ir`` (:mod:`tools.fuzz.cases_ir`);
* ``--openvino``: the same N files read, compiled and run by OpenVINO's CPU
  plugin, for comparison (its crashes are counted, not ours);
* ``--api N``: N random calls of the numpy API, checked against torch and a
  spec oracle where they apply and at 1, 2 and 7 threads
  (:mod:`tools.fuzz.cases_api`, :mod:`tools.fuzz.oracle`);
* ``--lib-ir N`` / ``--lib-onnx N``: N IR mutants of ovpool's opset / N
  hostile single-node ONNX pool files run by OpenVINO with the extension
  library in workers that import only ``openvino``, beside OpenVINO without
  the library and (ONNX) ONNX Runtime, whose outputs are compared
  (:mod:`tools.fuzz.cases_lib`).

Every case runs in a worker process under ``RLIMIT_AS`` (its size after its
imports plus ``--headroom`` MiB) with ``OVPOOL_MEMORY_BUDGET=--budget`` and a
per-case timeout; a worker that dies is replaced and its case re-run alone
(:mod:`tools.fuzz.runner`). Outcomes are classified ok / OvpoolError / other
exception / crash / hang / memory / wrong answer; the command prints the
table, every finding with the command that replays it
(``python -m tools.fuzz --replay api:SEED:INDEX``), and exits with status 1
when a finding is not a known open one. ``docs/fuzzing.md`` has the last
long run.
"""
