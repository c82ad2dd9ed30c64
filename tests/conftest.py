import os
import tempfile

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


def _openvino_installed():
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


_extension = {"path": None, "error": None}


@pytest.fixture(scope="session", autouse=True)
def _build_openvino_extension():
    """With OpenVINO installed, make sure ovpool's extension library is built
    from these sources against the installed OpenVINO, building it once per
    session when it is not (README's test command, an editable install,
    already built it), so that the suite tests it.

    It goes where ``python -m ovpool.openvino build`` puts it; where that
    folder is not writable (an installed wheel), into a temporary folder
    named by OVPOOL_OPENVINO_EXTENSION for this process and its children.
    A failed build fails the tests that need the library, not the others.
    """
    if not _openvino_installed():
        return
    from ovpool.openvino import _library

    try:
        if os.environ.get(_library.ENV_VAR):
            _extension["path"] = _library.extension_path()
            return
        out = _library.default_dir()
        try:
            out.mkdir(parents=True, exist_ok=True)
            writable = os.access(out, os.W_OK)
        except OSError:
            writable = False
        if not writable:
            out = tempfile.mkdtemp(prefix="ovpool-extension-")
            os.environ[_library.ENV_VAR] = out
        _extension["path"] = _library.build(out)
    except Exception as exc:  # reported by the tests that need the library
        _extension["error"] = exc


@pytest.fixture(scope="session")
def ov_extension(_build_openvino_extension):
    """Path of libovpool_openvino.so (the build's error if it failed)."""
    if _extension["error"] is not None:
        raise _extension["error"]
    if _extension["path"] is None:
        pytest.skip("OpenVINO is not installed")
    return _extension["path"]
