"""The package's modules import each other without a circle (type-checking imports included),
and `runs/` never names the `commands` package above it: commands register themselves."""

import ast
from pathlib import Path

import robustcount

ROOT = Path(robustcount.__file__).parent


def _module(path: Path) -> str:
    parts = ("robustcount", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = ROOT.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def import_graph() -> dict[str, set[str]]:
    """Each module's robustcount imports (`from package import module` points at the module)."""
    graph = {}
    for path in ROOT.rglob("*.py"):
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("robustcount"):
                for alias in node.names:
                    name = f"{node.module}.{alias.name}"
                    edges.add(name if _is_module(name) else node.module)
            elif isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name.startswith("robustcount"))
        graph[_module(path)] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    state, found = {}, []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                found.append(path[path.index(imported):] + [imported])
            elif imported in graph and imported not in state:
                visit(imported, path + [imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


LAZY = {"robustcount": {"robustcount.api"}}
"""The package's `__init__` imports the Python API only when `robustcount.attack` (or `certify`,
`estimate`) is first asked for, never while a module imports the package (docs/architecture.md;
`tests/test_api.py` checks that `import robustcount` leaves it out), so this edge closes no circle."""


def test_no_import_circle():
    graph = import_graph()
    for module, lazy in LAZY.items():
        assert lazy <= graph[module]
        graph[module] -= lazy
    assert circles(graph) == []


def test_the_circle_finder_finds_one():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_runs_never_names_the_commands_package():
    graph = import_graph()
    for path in (ROOT / "runs").rglob("*.py"):
        assert not any(name.startswith("robustcount.commands") for name in graph[_module(path)]), path
        assert "import_module(" not in path.read_text(), path  # nor imports it by a computed name
