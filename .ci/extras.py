"""Print the requirements of pyproject.toml's optional-dependency groups named
on the command line, one per line, for `pip install` without reinstalling the
package itself (which would rebuild the kernels)."""

import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

extras = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())[
    "project"
]["optional-dependencies"]
for name in sys.argv[1:]:
    print("\n".join(extras[name]))
