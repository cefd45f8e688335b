"""The import direction of DESIGN.md: nothing in ``gui_gym`` imports a layer above its own.

The layers, lowest first (a module may import its own layer and the ones before it)::

    core <- rewards <- models <- envs <- wrappers <- agents <- runs
         <- train / distributed / integrations <- view / cli

``envs`` and ``wrappers`` are one rank in the design; within it the rule is one-way:
a wrapper may import an env (``wrappers.semi_online`` re-exports the replay env), an env
never imports a wrapper (none does), so ``envs`` sits just below ``wrappers`` here.

The modules at the top of the package have a rank of their own, documented in
:data:`TOP_LEVEL`: ``gui_gym/__init__.py`` and ``_registration.py`` register the env ids
(they read the env catalogs), so they rank with ``envs``, and ``import gui_gym`` to
register the ids is an import of that rank. No module is kept at an old import path.

Every import counts: top-level ones, those inside functions and ``if TYPE_CHECKING:``
blocks (a type-only need is met by a protocol in the lower layer), relative ones resolved
against the importing module, and ``importlib.import_module`` of a literal name.

Two more house rules are checked here: no import circle between modules of the package (the
same imports, a package's ``__init__`` counted as a module), and no file over
:data:`MAX_LINES` lines unless it is data (:data:`DATA_FILES`, each with its reason), in the
package and in :data:`OTHER_CODE` (benchmarks, examples, scripts, tests).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "gui_gym"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

LAYERS: dict[str, int] = {
    "core": 0,
    "rewards": 1,
    "models": 2,
    "envs": 3,
    "wrappers": 4,  # one design rank with envs; wrappers may import envs, not the reverse
    "agents": 5,
    "runs": 6,
    "train": 7,
    "distributed": 7,
    "integrations": 7,
    "view": 8,
    "cli": 8,
}
"""Rank of each sub-package of ``gui_gym``: it may import ranks lower than or equal to its own."""

TOP_LEVEL: dict[str, int] = {
    PACKAGE: LAYERS["envs"],  # __init__.py: registers the ids (through _registration)
    f"{PACKAGE}._registration": LAYERS["envs"],  # string entry points; reads env catalogs
}
"""Rank of each module directly under ``gui_gym/`` (and of the package itself)."""

MAX_LINES = 1200
"""The most lines a module of code may have: past it, split it by job."""

DATA_FILES: dict[str, str] = {
    "envs/wikihow/gen_corpus.py": "the hand-written word banks of the synthetic WikiHow corpus",
}
"""Files (relative to ``gui_gym/``) exempt from :data:`MAX_LINES`, each with why it is data."""


@dataclass(frozen=True)
class UpwardImport:
    """One import of a higher layer: where it is, who imports and what."""

    path: Path
    line: int
    module: str
    target: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.module} -> {self.target}"


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module at ``path`` in the package whose folder is ``root``."""
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def rank(module: str, layers: dict[str, int], top_level: dict[str, int]) -> int:
    """The layer rank of ``module`` (a name inside the package).

    Raises:
        KeyError: for a sub-package or top-level module without a rank, naming it.
    """
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in layers:
        return layers[parts[1]]
    name = ".".join(parts[:2])
    if name not in top_level:
        raise KeyError(
            f"{name} has no layer rank: add its package to LAYERS or the module to TOP_LEVEL "
            "in tests/test_layers.py (and say why there)"
        )
    return top_level[name]


def imported_modules(
    tree: ast.Module, module: str, is_package: bool, known: set[str]
) -> Iterator[tuple[int, str]]:
    """Yield ``(line, target)`` for every import in ``tree`` of a module of this package.

    ``from P import n`` names the module ``P.n`` where that is a module of the package
    (``known``), else ``P`` itself.
    """
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield node.lineno, candidate if candidate in known else base
        elif isinstance(node, ast.Call) and _is_import_module(node.func) and node.args:
            name = _literal_prefix(node.args[0])
            if name:
                yield node.lineno, name


def _is_import_module(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id == "import_module"
    )


def _literal_prefix(arg: ast.expr) -> str | None:
    """The module a literal (or an f-string's leading literal, up to its last dot) names."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values:
        head = arg.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str) and "." in head.value:
            return head.value.rpartition(".")[0]
    return None


def upward_imports(
    root: Path,
    layers: dict[str, int] = LAYERS,
    top_level: dict[str, int] = TOP_LEVEL,
) -> list[UpwardImport]:
    """Every import under ``root`` (a package folder) of a layer above the importer's own.

    Raises:
        KeyError: for a module (importer or imported) whose layer has no rank.
    """
    package = root.name
    files = sorted(root.rglob("*.py"))
    known = {module_name(path, root) for path in files}
    found = []
    for path in files:
        module = module_name(path, root)
        own = rank(module, layers, top_level)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, target in imported_modules(tree, module, path.name == "__init__.py", known):
            if target != package and not target.startswith(package + "."):
                continue  # the standard library or a third-party package
            if rank(target, layers, top_level) > own:
                found.append(UpwardImport(path.relative_to(root.parent), line, module, target))
    return list(dict.fromkeys(found))  # `from X import a, b` is one import of X


def test_no_module_imports_a_layer_above_its_own():
    found = upward_imports(ROOT)
    if found:
        pytest.fail(
            f"{len(found)} import(s) of a higher layer (order: {_order()}):\n"
            + "\n".join(str(f) for f in found),
            pytrace=False,
        )


def test_every_subpackage_and_top_level_module_has_a_rank():
    for path in ROOT.iterdir():
        if path.name.startswith((".", "__pycache__")):
            continue
        if path.is_dir() and (path / "__init__.py").exists():
            assert path.name in LAYERS, f"gui_gym/{path.name}/ has no rank in LAYERS"
        elif path.suffix == ".py" and path.name != "__init__.py":
            assert f"{PACKAGE}.{path.stem}" in TOP_LEVEL, f"{path} has no rank in TOP_LEVEL"


def import_graph(root: Path) -> dict[str, set[str]]:
    """Every module of the package at ``root`` -> the package modules it imports (anywhere)."""
    files = sorted(root.rglob("*.py"))
    known = {module_name(path, root) for path in files}
    graph: dict[str, set[str]] = {}
    for path in files:
        module = module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets = imported_modules(tree, module, path.name == "__init__.py", known)
        graph[module] = {t for _, t in targets if t in known and t != module}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_import_circles():
    circles = import_circles(import_graph(ROOT))
    assert not circles, "import circles (move the shared piece into a module both import):\n" + (
        "\n".join(" <-> ".join(c) for c in circles)
    )


OTHER_CODE = ("benchmarks", "examples", "scripts", "tests")
"""Folders beside the package whose Python files keep the same limit (they are read and
changed as often as the library)."""


def test_no_code_file_over_the_line_limit():
    too_long = []
    for path in sorted(ROOT.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES and name not in DATA_FILES:
            too_long.append(f"gui_gym/{name}: {lines} lines")
    for folder in OTHER_CODE:
        for path in sorted((ROOT.parent / folder).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_LINES:
                too_long.append(f"{path.relative_to(ROOT.parent).as_posix()}: {lines} lines")
    assert not too_long, f"over {MAX_LINES} lines (split by job, or list as data):\n" + (
        "\n".join(too_long)
    )


def test_data_files_exist():
    for name in DATA_FILES:
        assert (ROOT / name).is_file(), f"DATA_FILES names gui_gym/{name}, which is gone"


def test_circle_finder_on_a_small_graph():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e2"}, "e2": set()}
    assert import_circles(graph) == [["a", "b", "c"]]
    assert import_circles({"x": {"y"}, "y": {"x"}, "z": set()}) == [["x", "y"]]


def _order() -> str:
    by_rank: dict[int, list[str]] = {}
    for name, r in LAYERS.items():
        by_rank.setdefault(r, []).append(name)
    return " <- ".join("/".join(names) for _, names in sorted(by_rank.items()))


# The checker itself, on a tiny package written for each test.


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            (root / parent / "__init__.py").touch()
        path.write_text(text, encoding="utf-8")
    return root


def _check(root: Path) -> list[str]:
    found = upward_imports(root, top_level={"pkg": LAYERS["envs"]})
    return [str(f) for f in found]


def test_checker_passes_imports_of_the_same_or_a_lower_layer(tmp_path):
    root = _package(
        tmp_path,
        {
            "core/a.py": "import os\nimport numpy\n",
            "models/m.py": "from pkg.core import a\nfrom pkg.rewards.r import f\n",
            "rewards/r.py": "from ..core.a import x\nf = 1\n",
            "wrappers/w.py": "from pkg.envs.e import Env\n",
            "envs/e.py": "import pkg\nEnv = 1\n",
        },
    )
    assert _check(root) == []


def test_checker_names_file_line_module_and_target_of_a_top_level_upward_import(tmp_path):
    root = _package(tmp_path, {"core/a.py": "import os\n\nfrom pkg.train.t import loop\n"})
    assert _check(root) == ["pkg/core/a.py:3 pkg.core.a -> pkg.train.t"]


def test_checker_finds_an_upward_import_inside_a_function(tmp_path):
    text = "def run():\n    from pkg.runs import rollout\n    return rollout\n"
    root = _package(tmp_path, {"agents/a.py": text, "runs/rollout.py": ""})
    assert _check(root) == ["pkg/agents/a.py:2 pkg.agents.a -> pkg.runs.rollout"]


def test_checker_resolves_relative_imports(tmp_path):
    root = _package(
        tmp_path,
        {"models/sub/m.py": "from ...train import core\n", "train/core.py": ""},
    )
    assert _check(root) == ["pkg/models/sub/m.py:1 pkg.models.sub.m -> pkg.train.core"]


def test_checker_holds_envs_below_wrappers(tmp_path):
    root = _package(tmp_path, {"envs/e.py": "from pkg.wrappers import w\n", "wrappers/w.py": ""})
    assert _check(root) == ["pkg/envs/e.py:1 pkg.envs.e -> pkg.wrappers.w"]


def test_checker_ranks_the_package_root_with_envs(tmp_path):
    text = "def register():\n    import pkg  # registers the ids\n"
    root = _package(tmp_path, {"models/m.py": text})
    assert _check(root) == ["pkg/models/m.py:2 pkg.models.m -> pkg"]


def test_checker_reads_import_module_of_a_literal_name(tmp_path):
    text = "import importlib\n\nimportlib.import_module(f'pkg.cli.{name}')\n"
    root = _package(tmp_path, {"runs/r.py": text})
    assert _check(root) == ["pkg/runs/r.py:3 pkg.runs.r -> pkg.cli"]


def test_checker_refuses_a_package_without_a_rank(tmp_path):
    root = _package(tmp_path, {"extras/x.py": ""})
    with pytest.raises(KeyError, match=r"pkg\.extras has no layer rank"):
        _check(root)
