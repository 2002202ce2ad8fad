"""mini_autograd's and the course's imports point one way: no module imports, even inside a
function, a module that leads back to it; the core imports nothing outside the core; the instruments import no nn
or optim; and `ops` imports no nn, optim or instruments."""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "mini_autograd"


def _modules(package):
    """{dotted name: (path, is_package)} for every module of `package` (a folder)."""
    found = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _absolute(module, is_package, level, name):
    """The absolute name of `from <level dots><name> import ...` written in `module`."""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def import_graph(package=PACKAGE):
    """{module: {imported module: line}}: every import statement, at any depth of the code."""
    modules = _modules(package)
    graph = {}
    for module, (path, is_package) in modules.items():
        edges = graph.setdefault(module, {})
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module
                if node.level:
                    base = _absolute(module, is_package, node.level, node.module)
                # `from package import name` imports the submodule `name` when there is one
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            else:
                continue
            for target in targets:
                if target in modules and target != module:
                    edges.setdefault(target, node.lineno)
    return graph


def cycles(graph):
    """The groups of modules that import each other, directly or not (Tarjan's components)."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                groups.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return groups


def _described(group, graph):
    return "\n".join(
        f"  {a} imports {b} (line {line})"
        for a in group
        for b, line in graph[a].items()
        if b in group
    )


@pytest.mark.parametrize(
    "package", [PACKAGE, PACKAGE.parent / "course"], ids=["mini_autograd", "course"]
)
def test_no_import_cycles(package):
    graph = import_graph(package)
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n\n".join(_described(g, graph) for g in found)


def imports_out_of(tier, forbidden, graph):
    """'a imports b (line n)' for each module of `tier` that imports a module named `forbidden*`
    from outside `tier`."""
    return [
        f"{a} imports {b} (line {line})"
        for a, edges in graph.items()
        if a.startswith(tier)
        for b, line in edges.items()
        if b.startswith(forbidden) and not b.startswith(tier)
    ]


# The three tiers: the engine (core), the course's instruments, and PyTorch's API breadth (the rest).
TIER_RULES = [
    ("mini_autograd.core", "mini_autograd"),
    ("mini_autograd.instruments", ("mini_autograd.nn", "mini_autograd.optim")),
    ("mini_autograd.ops", ("mini_autograd.nn", "mini_autograd.optim", "mini_autograd.instruments")),
]


@pytest.mark.parametrize("tier, forbidden", TIER_RULES)
def test_the_tiers_import_one_way(tier, forbidden):
    wrong = imports_out_of(tier, forbidden, import_graph())
    assert not wrong, "\n".join(wrong)


def test_an_import_across_tiers_is_found(tmp_path):
    package = tmp_path / "mini_autograd"
    (package / "core").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "core" / "__init__.py").write_text("")
    (package / "core" / "errors.py").write_text("")
    (package / "core" / "engine.py").write_text(
        "from . import errors\n\ndef run():\n    from ..nn import Module\n"
    )
    (package / "nn.py").write_text("from .core import engine\n")
    found = imports_out_of("mini_autograd.core", "mini_autograd", import_graph(package))
    assert found == ["mini_autograd.core.engine imports mini_autograd.nn (line 4)"]


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b": 1}, "b": {"a": 2}}, [["a", "b"]]),
        ({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}, [["a", "b", "c"]]),
        ({"a": {"b": 1}, "b": {}}, []),
    ],
)
def test_cycles_are_found(graph, expected):
    assert cycles(graph) == expected


def test_imports_inside_functions_and_of_submodules_count(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "x.py").write_text("def f():\n    from .sub import y\n")
    (package / "sub" / "y.py").write_text("from .. import x\n")
    graph = import_graph(package)
    assert graph["pkg.x"] == {"pkg.sub.y": 2} and graph["pkg.sub.y"] == {"pkg.x": 1}
    assert cycles(graph) == [["pkg.sub.y", "pkg.x"]]
