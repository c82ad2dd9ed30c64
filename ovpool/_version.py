"""The version of ovpool: the one place it is written.

``pyproject.toml`` reads it at build time (``[tool.setuptools.dynamic]``,
parsed without importing the package) and ``ovpool.__version__`` imports it,
so a source checkout, an in-place build and an installed wheel all report
the same version.
"""

__version__ = "0.1.0"
