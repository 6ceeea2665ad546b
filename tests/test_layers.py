"""The package layering of DESIGN.md holds: a package imports only packages below it,
daemons never import each other (the shadow, which runs inside the schedd, is the one
package a daemon may use), and nothing imports ``tests`` or ``benchmarks``."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: Each package's level; a package may import packages of a lower level only.
LEVELS = {
    "classad": 0,
    "daemoncore": 1, "transfer": 1, "jobmodel": 1, "gpushare": 1,
    "collector": 2, "negotiator": 2, "schedd": 2, "startd": 2, "shadow": 2,
    "bindings": 3,
    "web": 4,
}
#: Same-level imports the design allows: the schedd runs the shadow in its process,
#: and daemoncore's wire and security code is what transfer and the job model build on.
ALLOWED_SIDEWAYS = {("schedd", "shadow"), ("transfer", "daemoncore"), ("jobmodel", "daemoncore")}


def _imported_packages(path: pathlib.Path) -> set[tuple[str, int]]:
    """Top-level names ``path`` imports, anywhere in the file, with line numbers."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update((alias.name.split(".")[0], node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add((node.module.split(".")[0], node.lineno))
    return found


def _violations() -> list[str]:
    out = []
    for package, level in LEVELS.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            for imported, line in sorted(_imported_packages(path)):
                where = f"{path.relative_to(ROOT)}:{line} imports {imported}"
                if imported in ("tests", "benchmarks"):
                    out.append(where)
                elif imported in LEVELS and imported != package:
                    below = LEVELS[imported] < level
                    if not below and (package, imported) not in ALLOWED_SIDEWAYS:
                        out.append(where)
    return out


def test_every_package_imports_only_packages_below_it():
    """No package imports one at its own level or above, except the allowed pairs."""
    assert _violations() == []


def test_the_layer_check_sees_imports_inside_functions(tmp_path):
    """An import hidden in a function body still counts."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from schedd import service\n")
    assert ("schedd", 2) in _imported_packages(module)
