"""One error root: every exception cursor-byok defines is a ByokError with a Connect code."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import cursor_byok
from cursor_byok.errors import ByokError
from cursor_byok.errors import Code
from cursor_byok.wire import connect


def _modules():
    for info in pkgutil.walk_packages(cursor_byok.__path__, "cursor_byok."):
        if ".pb" in info.name or info.name.endswith(("webview", "script")):
            continue  # generated code; mitmproxy scripts with import-time side effects
        yield importlib.import_module(info.name)


def test_every_exception_class_derives_from_the_one_root() -> None:
    strays = []
    for module in _modules():
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not issubclass(value, ByokError)
            ):
                strays.append(f"{module.__name__}.{name}")
    assert strays == []


def test_codes_are_exactly_connects() -> None:
    assert {c.value for c in Code} == set(connect.CONNECT_CODE_HTTP_STATUS)
    assert {c.value for c in Code} == set(connect.GRPC_STATUS)


def test_code_is_typed_and_defaults_per_class() -> None:
    error = ByokError("boom", "permission_denied")
    assert error.code is Code.PERMISSION_DENIED
    assert connect.BadEndStream("x").code is Code.INVALID_ARGUMENT
    assert ByokError("x").code is Code.INTERNAL
