"""libovpool_openvino.so as OpenVINO's own tools and programs load it: a C++
program built here against the wheel, benchmark_app, ovc, a Python process
that never imports ovpool; and how ovpool finds, checks and builds it."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ov = pytest.importorskip("openvino")

import openvino.opset8 as o8  # noqa: E402

import ovpool  # noqa: E402
import ovpool.openvino as ovp  # noqa: E402
from ovpool import _check, ir, ov_ops  # noqa: E402
from ovpool.openvino import _library  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "ir_examples")
COMPILER = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
OV_DIR = os.path.dirname(os.path.abspath(ov.__file__))


def _runtime_library():
    libs = os.path.join(OV_DIR, "libs")
    found = sorted(f for f in os.listdir(libs) if re.fullmatch(r"libopenvino\.so(\.\d+)*", f))
    return os.path.join(libs, found[-1]) if found else None


@pytest.fixture(scope="module")
def cpp_program(tmp_path_factory):
    if COMPILER is None or _runtime_library() is None:
        pytest.skip("no C++ compiler, or no OpenVINO runtime library in the wheel")
    program = str(tmp_path_factory.mktemp("cpp") / "ov_extension_test")
    runtime = _runtime_library()
    command = [
        COMPILER,
        "-std=c++17",
        "-O1",
        "-D_GLIBCXX_USE_CXX11_ABI=1",
        "-I",
        os.path.join(OV_DIR, "include"),
        os.path.join(ROOT, "tests", "cpp", "ov_extension_test.cpp"),
        "-o",
        program,
        runtime,
        f"-Wl,-rpath,{os.path.dirname(runtime)}",
        "-ldl",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return program


@pytest.mark.parametrize("name", ["ovpool_opset", "ovpool_opset_onnx"])
def test_a_cpp_program_loads_the_library_and_runs_an_ovpool_ir(
    cpp_program, ov_extension, name, tmp_path
):
    path = os.path.join(EXAMPLES, f"{name}.xml")
    recording = _check.load_recording(path)
    inputs = []
    for k, array in enumerate(recording.inputs):
        inputs.append(str(tmp_path / f"in_{k}.bin"))
        np.ascontiguousarray(array).tofile(inputs[-1])
    result = subprocess.run(
        [cpp_program, ov_extension, path, str(tmp_path), *inputs],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("ok")
    assert "built against OpenVINO " + _library.installed_openvino()[0] in result.stdout
    got = [
        np.fromfile(tmp_path / f"out_{k}.bin", dtype=e.dtype).reshape(e.shape)
        for k, e in enumerate(recording.outputs)
    ]
    ok, diff, why = _check.compare_all(ir.read_model(path), got, recording.outputs)
    assert ok, (why, diff)


def test_benchmark_app_runs_an_ovpool_ir(ov_extension):
    tool = shutil.which("benchmark_app")
    if tool is None:
        pytest.skip("benchmark_app is not installed")
    result = subprocess.run(
        [
            tool,
            "-m",
            os.path.join(EXAMPLES, "ovpool_opset.xml"),
            "-d",
            "CPU",
            "-extensions",
            ov_extension,
            "-niter",
            "8",
            "-hint",
            "latency",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "Throughput" in result.stdout


def test_ovc_converts_onnx_with_the_library(ov_extension, tmp_path):
    onnx = pytest.importorskip("onnx")
    tool = shutil.which("ovc")
    if tool is None:
        pytest.skip("ovc is not installed")
    from references import onnx_node_model

    x = np.zeros((1, 1, 5, 5), np.float32)
    attrs = dict(
        kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, storage_order=1
    )
    onnx.save(onnx_node_model("MaxPool", [x], attrs, 2, opset=12), tmp_path / "m.onnx")
    expected = {
        "default": [("MaxPool", "opset14"), ("OnnxMaxPool", "ovpool")],  # values native
        "all": [("OnnxMaxPool", "ovpool")],
    }
    for policy, pools in expected.items():
        result = subprocess.run(
            [
                tool,
                str(tmp_path / "m.onnx"),
                "--extension",
                ov_extension,
                "--output_model",
                str(tmp_path / f"{policy}.xml"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "OVPOOL_OPENVINO_POLICY": policy},
        )
        assert result.returncode == 0, result.stdout + result.stderr
        layers = ir.read_model(tmp_path / f"{policy}.xml").layers
        assert (
            sorted((layer.type, layer.version) for layer in layers if "Pool" in layer.type) == pools
        )


def test_a_process_that_never_imports_ovpool(ov_extension, tmp_path):
    x = o8.parameter([2, 3, 17, 15], np.float32, name="x")
    values, indices = ovp.make_op(
        "MaxPool", [x], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], axis=2
    ).outputs()
    avg = ovp.make_op(
        "AvgPool",
        [x],
        kernel=[3, 3],
        strides=[2, 2],
        pads_begin=[1, 1],
        pads_end=[1, 1],
        rounding_type="ceil_torch",
        **{"exclude-pad": False},
    )
    ov.save_model(
        ov.Model([o8.result(values), o8.result(indices), o8.result(avg.output(0))], [x]),
        tmp_path / "m.xml",
    )
    data = np.random.default_rng(0).standard_normal((2, 3, 17, 15)).astype(np.float32)
    np.save(tmp_path / "x.npy", data)
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import openvino as ov
        library, folder = sys.argv[1], sys.argv[2]
        core = ov.Core()
        core.add_extension(library)
        compiled = core.compile_model(folder + "/m.xml", "CPU",
                                      {"INFERENCE_PRECISION_HINT": "f32"})
        result = compiled([np.load(folder + "/x.npy")])
        np.savez(folder + "/out.npz", *[result[o] for o in compiled.outputs])
        assert not [m for m in sys.modules if m.split(".")[0] == "ovpool"]
        print("ok")
    """)
    result = subprocess.run(
        [sys.executable, "-c", code, ov_extension, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(tmp_path),
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
    with np.load(tmp_path / "out.npz") as out:
        got = [out[k] for k in out.files]
    expected = [
        *ov_ops.max_pool(data, [3, 3], [2, 2], [1, 1], [1, 1], axis=2),
        ov_ops.avg_pool(
            data, [3, 3], [2, 2], [1, 1], [1, 1], exclude_pad=False, rounding_type="ceil_torch"
        ),
    ]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


VEX = re.compile(
    r"%[yz]mm\d|\sv(?:mov|add|sub|mul|div|max|min|cvt|perm|broadcast|blend|shuf|"
    r"unpck|and|or|xor|fmadd|insert|extract|pcmp|cmp|pmax|pmin|padd|psub|"
    r"gather)\w*\s"
)


def _avx_reachable_outside_v3(library):
    """The functions with AVX code that code outside the x86-64-v3 build can
    reach in ``library``, and how many of that build's functions have AVX
    code. Reach starts at the entry points (exported functions) and the
    addresses the library's data holds (vtables, initializers) and follows
    calls, jumps and addresses taken, without entering the x86-64-v3 build
    (which runs only where the CPU has AVX2).

    Both core builds emit their copies of the standard library's inline
    functions, and the linker keeps the first copy of each: CMake lists the
    baseline objects first, so an x86-64-v3 copy stays only where no baseline
    object emitted one, that is where only the x86-64-v3 build calls it.
    """
    tools = [shutil.which("objdump"), shutil.which("readelf")]
    if None in tools:
        pytest.skip("objdump or readelf is not installed")

    def run(*args):
        return subprocess.run(args, capture_output=True, text=True, timeout=300, check=True).stdout

    functions = {}
    for block in re.split(
        r"\n(?=[0-9a-f]+ <)", run(tools[0], "-d", "-C", "--no-show-raw-insn", library)
    ):
        header = re.match(r"([0-9a-f]+) <(.*)>:", block)
        if header is not None:
            functions[int(header.group(1), 16)] = (header.group(2), block)
    symbols = run(tools[1], "-rW", "--dyn-syms", library)
    roots = {int(a, 16) for a in re.findall(r"R_X86_64_RELATIVE\s+([0-9a-f]+)", symbols)}
    roots |= {
        int(a, 16)
        for a in re.findall(
            r"\d+: ([0-9a-f]+)\s+\d+ FUNC\s+(?:GLOBAL|WEAK).*?\s(?!UND)\S+ \S+$", symbols, re.M
        )
    }
    v3 = {a for a, (name, _) in functions.items() if "x86_64_v3" in name}
    avx = {a for a, (_, block) in functions.items() if VEX.search(block)}
    seen, todo = set(), [a for a in roots if a in functions and a not in v3]
    while todo:
        address = todo.pop()
        if address in seen:
            continue
        seen.add(address)
        for line in functions[address][1].splitlines()[1:]:
            for target in re.findall(r"\b([0-9a-f]+) <", line.partition(":")[2]):
                target = int(target, 16)
                if target in functions and target not in v3 and target not in seen:
                    todo.append(target)
    return sorted(functions[a][0] for a in avx & seen), len(avx & v3)


def test_the_avx_check_on_a_library_linked_both_ways(tmp_path):
    """The premise of _avx_reachable_outside_v3, on a library of two builds of
    one function: linked baseline first, the standard library's shared inline
    functions are baseline copies; linked the other way, baseline code calls
    AVX code, and the check says so."""
    if COMPILER is None:
        pytest.skip("no C++ compiler")
    source = textwrap.dedent("""\
        #include <array>
        #include <vector>
        namespace NS {
        long fill(long n) {
            std::vector<std::array<long, 4>> v;
            for (long i = 0; i < n; i++) v.push_back({i, i + 1, i + 2, i + 3});
            long s = 0;
            for (auto &a : v) s += a[0] * a[3];
            return s;
        }
        }
    """)
    objects = []
    for ns, flags in (("baseline", []), ("x86_64_v3", ["-march=x86-64-v3"])):
        (tmp_path / f"{ns}.cpp").write_text(source.replace("NS", ns))
        objects.append(str(tmp_path / f"{ns}.o"))
        subprocess.run(
            [
                COMPILER,
                "-O2",
                "-fPIC",
                "-fno-inline",
                *flags,
                "-c",
                str(tmp_path / f"{ns}.cpp"),
                "-o",
                objects[-1],
            ],
            check=True,
            timeout=120,
        )
    found = []
    for name, order in (("first", objects), ("last", objects[::-1])):
        library = str(tmp_path / f"lib{name}.so")
        subprocess.run([COMPILER, "-shared", *order, "-o", library], check=True, timeout=120)
        found.append(_avx_reachable_outside_v3(library)[0])
    assert found[0] == []
    assert any("std::" in name for name in found[1]), found[1]


def test_only_the_x86_64_v3_build_uses_avx(ov_extension):
    """The library links the kernel core twice: no code outside the x86-64-v3
    build may reach AVX code, or the library would crash on a CPU without
    AVX2."""
    offenders, v3 = _avx_reachable_outside_v3(ov_extension)
    assert v3 > 0
    assert not offenders, offenders[:20]


def test_missing_library_says_how_to_build_it(monkeypatch, tmp_path):
    monkeypatch.setenv(_library.ENV_VAR, str(tmp_path / "nowhere.so"))
    with pytest.raises(ovp.ExtensionError, match="names no library"):
        ovp.extension_path()
    monkeypatch.delenv(_library.ENV_VAR)
    monkeypatch.setattr(_library, "default_dir", lambda: tmp_path)
    with pytest.raises(ovp.ExtensionError, match=re.escape(_library.BUILD_COMMAND)):
        ovp.extension_path()
    with pytest.raises(ovp.ExtensionError, match="not in this install"):
        ovp.register(ov.Core())


def test_a_library_built_against_another_openvino_is_refused(ov_extension, monkeypatch, tmp_path):
    shutil.copy(ov_extension, tmp_path / _library.LIBRARY_NAME)
    record = _library.read_record(_library.Path(ov_extension))
    record["openvino_release"] = "2025.0.0"
    (tmp_path / _library.RECORD_NAME).write_text(json.dumps(record))
    monkeypatch.setenv(_library.ENV_VAR, str(tmp_path))
    release = _library.installed_openvino()[0]
    with pytest.raises(ovp.ExtensionError) as info:
        ovp.extension_path()
    message = str(info.value)
    assert "2025.0.0" in message and release in message and _library.BUILD_COMMAND in message
    assert 'pip install "openvino==2025.0.0"' in message and _library.ENV_VAR in message
    assert not _library.is_current(tmp_path / _library.LIBRARY_NAME)


def test_the_build_is_recorded_and_current(ov_extension):
    assert _library.is_current(_library.Path(ov_extension))
    record = _library.read_record(_library.Path(ov_extension))
    assert record["openvino_version"] == _library.installed_openvino()[1]
    assert record["ovpool"] == ovpool.__version__
    info = ovp.info()
    assert info["path"] == ov_extension
    assert "opset ovpool" in info["info"] and "kernels" in info["info"]


def test_python_m_ovpool_openvino(ov_extension):
    result = subprocess.run(
        [sys.executable, "-m", "ovpool.openvino", "path"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 0 and result.stdout.strip() == ov_extension, result.stderr
    # up to date: build keeps the library it has
    before = os.stat(ov_extension).st_mtime_ns
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ovpool.openvino",
            "build",
            "--output",
            os.path.dirname(ov_extension),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert os.stat(ov_extension).st_mtime_ns == before
