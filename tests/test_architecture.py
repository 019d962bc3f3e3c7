"""The package's shape, read from its own source: the import graph has no cycle, packages form layers, no package
uses another's private names, engines do not import each other, and only the command line imports the Dask layer.

Every import counts, function-local ones included. The walker is checked on a small made-up package first, so
that these tests can fail.
"""

import ast
import os
from pathlib import Path

import pytest

import seqcompare

ENGINES = ("hamming", "scan", "align", "ccc")


class Package:
    """The modules under ``root`` (a package directory named like the package) and their imports."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.name = self.root.name
        self.modules = {}  # dotted name -> (path, is_package)
        for path in sorted(self.root.rglob("*.py")):
            parts = path.relative_to(self.root.parent).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            self.modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
        self.imports = {name: list(self._imports_of(name)) for name in self.modules}

    def unit(self, module: str) -> str:
        """The top-level package a module belongs to (``""`` for the root's own modules)."""
        parts = module.split(".")
        if len(parts) > 2 or (len(parts) == 2 and self.modules[module][1]):
            return parts[1]
        return ""

    def _absolute(self, module: str, is_package: bool, node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        return ".".join(base + ([node.module] if node.module else []))

    def _imports_of(self, module: str):
        """``(target module, imported name or None, line)`` for every import of this package's modules."""
        path, is_package = self.modules[module]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == self.name:
                        yield self._known(alias.name), None, node.lineno
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(module, is_package, node)
                if base.split(".")[0] != self.name:
                    continue
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    if submodule in self.modules:
                        yield submodule, None, node.lineno
                    else:
                        yield self._known(base), alias.name, node.lineno

    def _known(self, dotted: str) -> str:
        while dotted and dotted not in self.modules:
            dotted = dotted.rpartition(".")[0]
        return dotted

    def module_edges(self) -> dict:
        """Module -> modules it imports (a package's ``__init__`` re-exporting its own modules is not an edge)."""
        edges = {}
        for module, found in self.imports.items():
            is_package = self.modules[module][1]
            edges[module] = {target for target, _, _ in found
                             if target != module and not (is_package and target.startswith(module + "."))}  # fmt: skip
        return edges

    def unit_edges(self) -> dict:
        """Top-level package -> top-level packages it imports (the root's own modules are one layer below all)."""
        edges: dict = {}
        for module, targets in self.module_edges().items():
            here = self.unit(module)
            for target in targets:
                there = self.unit(target)
                if here and there and there != here:
                    edges.setdefault(here, set()).add(there)
        return edges

    def private_uses(self) -> list:
        """Imports and attribute reads of ``_private`` names that belong to another top-level package."""
        found = []
        for module, imports in self.imports.items():
            here = self.unit(module)
            for target, name, line in imports:
                there = self.unit(target)
                if there and there != here:
                    private_part = [p for p in target.split(".")[1:] + [name or ""] if _private(p)]
                    if private_part:
                        found.append(f"{module}:{line} uses {target}{'.' + name if name else ''}")
            found += self._private_attributes(module, here)
        return found

    def _private_attributes(self, module: str, here: str) -> list:
        """``other._name`` where ``other`` is bound to another package's module by an import in this file."""
        path, is_package = self.modules[module]
        tree = ast.parse(path.read_text(), str(path))
        bound = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = self._absolute(module, is_package, node)
                for alias in node.names:
                    if f"{base}.{alias.name}" in self.modules:
                        bound[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == self.name:
                        bound[alias.asname or alias.name] = alias.name if alias.asname else self.name
        found = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                chain = []
                value = node.value
                while isinstance(value, ast.Attribute):
                    chain.append(value.attr)
                    value = value.value
                if isinstance(value, ast.Name) and value.id in bound:
                    target = self._known(".".join([bound[value.id], *reversed(chain)]))
                    there = self.unit(target) if target else ""
                    if there and there != here:
                        found.append(f"{module}:{node.lineno} reads {target}.{node.attr}")
        return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def cycles(edges: dict) -> list:
    """The strongly connected components of more than one node (Kosaraju's algorithm, iterative)."""
    nodes = set(edges) | {t for targets in edges.values() for t in targets}
    order, seen = [], set()
    for start in sorted(nodes):
        if start in seen:
            continue
        seen.add(start)
        stack = [(start, iter(sorted(edges.get(start, ()))))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                order.append(node)
            elif child not in seen:
                seen.add(child)
                stack.append((child, iter(sorted(edges.get(child, ())))))
    reverse: dict = {}
    for node, targets in edges.items():
        for target in targets:
            reverse.setdefault(target, set()).add(node)
    components, assigned = [], set()
    for node in reversed(order):
        if node in assigned:
            continue
        component, stack = [], [node]
        assigned.add(node)
        while stack:
            current = stack.pop()
            component.append(current)
            for previous in reverse.get(current, ()):
                if previous not in assigned:
                    assigned.add(previous)
                    stack.append(previous)
        if len(component) > 1:
            components.append(sorted(component))
    return components


@pytest.fixture(scope="module")
def package():
    return Package(Path(seqcompare.__file__).parent)


# -- the walker itself ---------------------------------------------------------------------------------------


def write(root: Path, files: dict) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_walker_finds_cycles_private_uses_and_local_imports(tmp_path):
    fake = write(tmp_path / "pkg", {
        "__init__.py": "from .a import thing\n",
        "a/__init__.py": "from .inner import thing\n",
        "a/inner.py": "from ..b.api import helper\nthing = 1\n",
        "b/__init__.py": "",
        "b/api.py": "def helper():\n    from ..a.inner import thing\n    from ..a import inner\n    return inner._secret\n",
        "c/__init__.py": "",
        "c/x.py": "from ..b.api import _hidden\nimport pkg.d\n",
        "d.py": "",
    })  # fmt: skip
    walked = Package(fake)
    assert cycles(walked.module_edges()) == [["pkg.a.inner", "pkg.b.api"]]
    assert cycles(walked.unit_edges()) == [["a", "b"]]
    assert sorted(walked.private_uses()) == ["pkg.b.api:4 reads pkg.a.inner._secret", "pkg.c.x:1 uses pkg.b.api._hidden"]
    assert walked.unit("pkg.d") == "" and walked.unit("pkg.a") == "a" and walked.unit("pkg.a.inner") == "a"
    clean = Package(write(tmp_path / "ok", {"__init__.py": "from .m import f\n", "m.py": "def f():\n    pass\n"}))
    assert cycles(clean.module_edges()) == [] and clean.private_uses() == []


# -- the package ---------------------------------------------------------------------------------------------


def test_a_package_per_command_and_the_shared_layers(package):
    units = {package.unit(m) for m in package.modules} - {""}
    assert {*ENGINES, "allpairs", "cuda", "io", "cli", "distributed"} <= units
    for engine in ENGINES:  # each holds its API, its oracle, and its GPU host code next to its kernels
        for part in ("api", "reference", "gpu", "work"):
            assert f"seqcompare.{engine}.{part}" in package.modules, (engine, part)
        cuda_sources = list((package.root / engine).glob("*.cu"))
        assert cuda_sources, engine
    assert sorted(p.name for p in (package.root / "cuda").glob("*.cu*")) == ["bitgemm.cu", "bitgemm.cuh",
                                                                             "warp_append.cuh"]  # fmt: skip


def test_no_import_cycle(package):
    assert cycles(package.module_edges()) == []


def test_packages_form_layers(package):
    # io, cuda < allpairs < engines < distributed, cli: no package is imported back by one it imports.
    assert cycles(package.unit_edges()) == []


def test_no_package_uses_another_packages_private_names(package):
    assert package.private_uses() == []


def test_engines_do_not_import_each_other(package):
    edges = package.unit_edges()
    assert {engine: sorted(edges.get(engine, set()) & set(ENGINES)) for engine in ENGINES} == {e: [] for e in ENGINES}


def test_only_the_command_line_imports_the_dask_layer(package):
    importers = sorted(module for module, targets in package.module_edges().items()
                       if any(package.unit(t) == "distributed" for t in targets)
                       and package.unit(module) not in ("distributed", "cli"))  # fmt: skip
    assert importers == []
    # and the layer reaches the engines only through the engine's contract (allpairs) and shared layers
    assert package.unit_edges()["distributed"] <= {"allpairs", "cuda", "io"}


def test_the_packages_ship_their_cuda_sources():
    import tomllib

    with open(Path(__file__).parents[1] / "pyproject.toml", "rb") as handle:
        data = tomllib.load(handle)["tool"]["setuptools"]["package-data"]["seqcompare"]
    root = Path(seqcompare.__file__).parent
    from fnmatch import fnmatch

    for source in list(root.rglob("*.cu")) + list(root.rglob("*.cuh")):
        relative = os.fspath(source.relative_to(root))
        assert any(fnmatch(relative, pattern) for pattern in data), relative
