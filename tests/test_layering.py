"""The package layers read bottom-up: logic, quant → verify → data → trace → chain → domains → rewards → eval →
train → prm → serve → integrations.

Every `prosfi` import (module level, inside functions, under TYPE_CHECKING) is read with `ast`; a
module may import its own layer or a lower one, the module import graph has no cycles, and no module
imports another module's private (`_name`) names: what is shared is public.
Top-level helper modules (`prosfi.jsonl`) and standalone leaves (`prosfi.serve.client`, which imports no
prosfi module but the leaf `prosfi.retry`, so the TRL remote reward in `rewards` can use it) sit below every
layer; commands (`prosfi.cli`, `prosfi.__main__`, and a package's command modules `<package>.cli`, `*_cli`,
`cli_*`) sit above all of them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import prosfi

LAYERS = ("logic", "quant", "verify", "data", "trace", "chain", "domains", "rewards", "eval", "train", "prm",
          "serve", "integrations")
LEAVES = ("prosfi.serve.client", "prosfi.retry")
ALLOWED_UPWARD: set[tuple[str, str]] = set()  # known exceptions (importer, imported), each with its reason: none
COMMANDS = ("prosfi.cli", "prosfi.__main__")
ROOT = Path(prosfi.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                out.add(full if full in modules else node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in modules}


def _layer(module: str) -> int:
    """Index in LAYERS; top-level helpers sit below all, commands above all."""
    parts = module.split(".")
    if module in LEAVES:
        return -1
    if module in COMMANDS or (len(parts) == 3 and (parts[2] == "cli" or parts[2].endswith("_cli")
                                                    or parts[2].startswith("cli_"))):
        return len(LAYERS)
    if len(parts) == 2 and parts[1] not in LAYERS:
        return -1  # a top-level helper module such as prosfi.jsonl
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else len(LAYERS)


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: _imports(p, modules) - {m} for m, p in modules.items()}


def test_every_layer_is_known():
    packages = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(LAYERS)


def test_leaves_import_no_prosfi_module():
    """A leaf imports no prosfi module but another leaf (the serve client waits through prosfi.retry)."""
    graph = _graph()
    assert all(graph[leaf] <= set(LEAVES) for leaf in LEAVES)


def test_no_module_imports_a_higher_layer():
    upward = [f"{m} -> {o}" for m, targets in _graph().items() for o in targets
              if _layer(o) > _layer(m) and not m.endswith(".__main__") and (m, o) not in ALLOWED_UPWARD]  # `python -m` entry points
    assert not upward


def test_no_import_cycles():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
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
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert not cycles


def test_the_checker_sees_a_planted_upward_import_and_cycle(tmp_path):
    a = tmp_path / "a.py"
    a.write_text("from prosfi.rewards.score import score_batch\n")
    modules = {"prosfi.verify.a": a, "prosfi.rewards.score": a}
    assert _imports(a, modules) == {"prosfi.rewards.score"}
    assert _layer("prosfi.rewards.score") > _layer("prosfi.verify.a")


def test_quant_sits_below_verify_and_the_verdict_below_both():
    assert _layer("prosfi.logic.parser") < _layer("prosfi.quant.units") < _layer("prosfi.verify.verifier")
    assert _layer("prosfi.verdict") < _layer("prosfi.quant.check")  # the shared Verdict: a top-level helper


def _private_imports(path: Path, module: str) -> list[str]:
    """`from prosfi.x import _y` in `path` where prosfi.x is another module (a name shared across modules is
    public; issue #29 counted 25 such imports)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("prosfi") \
                and node.module != module:
            out += [f"{module} <- {node.module}.{a.name}" for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")]
    return out


def test_no_module_imports_a_private_name_of_another(tmp_path):
    assert [line for m, p in _modules().items() for line in _private_imports(p, m)] == []
    planted = tmp_path / "b.py"
    planted.write_text("def f():\n    from prosfi.data.fol_proof import _Chainer\n")
    assert _private_imports(planted, "prosfi.prm.b") == ["prosfi.prm.b <- prosfi.data.fol_proof._Chainer"]
