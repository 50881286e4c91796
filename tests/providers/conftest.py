"""Make `tests/` importable so tests can `from fakes.fake_provider import FakeProvider`.

`tests/` has no `__init__.py` (pytest's default rootdir-relative imports), so the shared
fakes package is put on sys.path here. If the project later sets
`[tool.pytest.ini_options] pythonpath = ["tests"]`, this file can go.
"""

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
