"""A stand-in ``nvidia-cuda-mps-control`` for tests: a real executable that appends one JSON
line per call (its arguments, stdin, and the CUDA_* variables it was given) to a record file,
as the real one would start (``-d``) or be told to ``quit``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

SCRIPT = """#!{python}
import json, os, sys
line = {{"args": sys.argv[1:], "stdin": "" if "-d" in sys.argv[1:] else sys.stdin.read(),
        "env": {{k: v for k, v in os.environ.items() if k.startswith("CUDA_")}}}}
with open({record!r}, "a") as f:
    f.write(json.dumps(line) + "\\n")
"""


def install(directory: Path) -> tuple[Path, Path]:
    """Write the stand-in as ``directory/nvidia-cuda-mps-control``; (its path, its record file)."""
    directory.mkdir(parents=True, exist_ok=True)
    binary, record = directory / "nvidia-cuda-mps-control", directory / "mps-calls.jsonl"
    binary.write_text(SCRIPT.format(python=sys.executable, record=str(record)))
    binary.chmod(0o755)
    return binary, record


def calls(record: Path) -> list[dict]:
    """Every call the stand-in recorded, in order."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
