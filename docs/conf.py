"""Sphinx configuration of ovpool's documentation.

Build: ``pip install -e ".[docs]"`` then
``python -m sphinx -W --keep-going -b html docs docs/_build/html``
(warnings are errors; tests/test_docs.py and .ci/run build it the same way).
The pages are MyST Markdown; the API reference is autodoc + numpydoc from the
docstrings of the installed (or in-place built) ovpool.
"""

import ovpool

project = "ovpool"
author = "the ovpool developers"
copyright = "the ovpool developers, Apache License 2.0"
version = release = ovpool.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3

# API pages: numpydoc renders the docstrings; the types are in the docstrings,
# so the signatures show none.
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# Every documented function and class must describe each parameter, what it
# returns, and carry an example; with -W a missing section fails the build.
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "PR07", "RT01", "EX01"}
numpydoc_validation_exclude = {
    # the IR reader builds these dataclasses; their fields are documented
    # under Attributes, not as constructor parameters
    r"^ovpool\.ir\.(Layer|TensorInfo)$",
    # one-line properties and constants
    r"\.runs_on_ovpool$",
    r"^ovpool\.ir\.Layer\.label$",
    r"^ovpool\.ir\.MAX_[A-Z_]+$",
}

html_theme = "alabaster"
html_title = f"ovpool {release}"
html_theme_options = {"description": "Fast, exact pooling for OpenVINO IR and ONNX on CPUs"}
