"""The layers of docs/architecture.md, checked on every `robustcount` import in the package: a
module imports only from its own layer and the layers below, and no algorithm package imports
another."""

import ast
from pathlib import Path

import robustcount

ROOT = Path(robustcount.__file__).parent
LAYERS = [
    {"errors", "text", "seeding", "options", "data", "atomic", "registry", "journal", "status", "__init__"},
    {"models", "spaces"},
    {"goal", "orders"},
    {"attacks", "proofs", "counting"},
    {"runs"},
    {"commands", "training", "augment", "testing", "pytest_plugin"},
    {"cli", "__main__"},
]
ALGORITHMS = {"attacks", "proofs", "counting"}


def level(part: str) -> int:
    return next(k for k, layer in enumerate(LAYERS) if part in layer)


def imports(path: Path):
    """The first component under robustcount of every module `path` imports (at any depth)."""
    for node in ast.walk(ast.parse(path.read_text())):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
            [a.name for a in node.names] if isinstance(node, ast.Import) else []
        for name in names:
            parts = name.split(".")
            if parts[0] == "robustcount" and len(parts) > 1:
                yield parts[1]


def test_every_import_points_down_or_sideways():
    checked = 0
    for path in ROOT.rglob("*.py"):
        own = path.relative_to(ROOT).parts[0].removesuffix(".py")
        for imported in imports(path):
            checked += 1
            assert level(imported) <= level(own), f"{path.relative_to(ROOT)} imports robustcount.{imported}"
            if own in ALGORITHMS and imported in ALGORITHMS:
                assert imported == own, f"{path.relative_to(ROOT)} (an algorithm) imports robustcount.{imported}"
            if {own, imported} == {"models", "spaces"}:
                raise AssertionError(f"{path.relative_to(ROOT)}: models and spaces never import each other")
    assert checked > 200
