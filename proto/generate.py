"""Regenerate the Python protobuf modules in addon/cursor_byok/pb from proto/*.proto.

Run with `just proto` (or `uv run python proto/generate.py`). Uses grpcio-tools' bundled protoc so
the output depends only on the locked dev dependencies. protoc writes absolute imports between our
own modules (`import agent_v1_pb2`); they are rewritten to relative ones so the modules live inside
the `cursor_byok.pb` package.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROTO_DIR = Path(__file__).resolve().parent
DEFAULT_OUT = PROTO_DIR.parent / "addon" / "cursor_byok" / "pb"
HEADER = '"""Generated protobuf modules. Do not edit: run `just proto`."""\n'


def _well_known_include() -> str:
    import grpc_tools

    return str(Path(grpc_tools.__file__).parent / "_proto")


def generate(out_dir: Path = DEFAULT_OUT) -> list[Path]:
    """Compile every .proto under proto/ into out_dir; return the written files."""
    sources = sorted(p.name for p in PROTO_DIR.glob("*.proto"))
    if not sources:
        raise SystemExit("no .proto files in proto/")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTO_DIR}",
            f"-I{_well_known_include()}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            *sources,
        ]
        subprocess.run(cmd, check=True, cwd=PROTO_DIR)
        own = {Path(s).stem + "_pb2" for s in sources}
        out_dir.mkdir(parents=True, exist_ok=True)
        for old in out_dir.glob("*_pb2.py*"):
            old.unlink()
        written = []
        for path in sorted(Path(tmp).iterdir()):
            text = _relative_imports(path.read_text(), own)
            dest = out_dir / path.name
            dest.write_text(text)
            written.append(dest)
        init = out_dir / "__init__.py"
        init.write_text(HEADER)
        written.append(init)
    return written


def _relative_imports(text: str, own: set[str]) -> str:
    for module in own:
        text = re.sub(rf"^import {module} as ", f"from . import {module} as ", text, flags=re.M)
        text = re.sub(rf"^import {module}$", f"from . import {module}", text, flags=re.M)
    return text


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    if target.exists() and target != DEFAULT_OUT:
        shutil.rmtree(target)
    for f in generate(target):
        print(f"wrote {f}")
