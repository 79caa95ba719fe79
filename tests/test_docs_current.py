"""Issue 27, "the docs are current": eval.md's --data table has a row for every source `load_source` accepts,
physics:demo evaluates the quantity demo's task on fresh draws, prm.md's quick start trains the policy for the
steps its text says, benchmarks.md names the script its timings come from, and layout.md lists every module
in layer order."""

from __future__ import annotations

import re
from pathlib import Path

from prosfi.eval.sources import load_source

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_source_kind_has_a_row_in_the_eval_table():
    from prosfi.data.sources import SOURCES

    table = [line for line in (DOCS / "eval.md").read_text().splitlines() if line.startswith("| `")]
    forms = [(s.name, form) for s in SOURCES.values() if s.read_spec for form in s.spec.split()]
    assert len(forms) >= 25  # every registered source's every spec form, not a hand-kept list
    for name, form in forms:
        assert any(f"`{form}`" in row for row in table), (name, form)


def test_physics_demo_draws_fresh_problems_with_distinct_ids():
    problems = load_source("physics:demo", count=50, seed=7).problems
    assert len({p.id for p in problems}) == 50 and all(p.id.startswith("physics-demo-s7-") for p in problems)


def test_prm_quick_start_trains_the_steps_it_describes():
    text = (DOCS / "prm.md").read_text()
    command = re.search(r"^prosfi sft recipes/demo/cpu_chains.yaml .*$", text, re.MULTILINE).group(0)  # the quick start
    steps = re.search(r"--sft_max_steps (\d+)", command).group(1)
    assert f"then {steps} SFT steps" in text


def test_benchmarks_name_the_script_that_measures_them():
    text = (DOCS / "benchmarks.md").read_text()
    assert "python bench/bench_suite.py" in text
    assert "about 1,750 tests" not in text and "about 3 minutes" not in text
    assert (DOCS.parent / "bench" / "bench_suite.py").is_file()


def _layout_tree() -> set[str]:
    """The files docs/layout.md's tree lists under prosfi/ (`prosfi/chain/facts.py`, ...)."""
    block = (DOCS / "layout.md").read_text().split("```\n", 2)[1]
    listed, folder = set(), None
    for line in block.splitlines():
        if line.startswith("prosfi/"):
            folder = line.split()[0]
        elif not line.strip():
            folder = None
        elif folder and line.startswith("  "):
            listed.add(folder + line.split()[0])
    return listed


def test_layout_lists_every_module_of_the_package_and_no_other():
    root = DOCS.parent / "prosfi"
    files = {f"prosfi/{p.relative_to(root).as_posix()}" for p in root.rglob("*")
             if p.is_file() and p.suffix in (".py", ".lark", ".txt") and p.name != "__init__.py"
             and "__pycache__" not in p.parts}
    listed = _layout_tree()
    assert files - listed == set(), "modules missing from docs/layout.md"
    assert listed - files == set(), "docs/layout.md lists files that are gone"


def test_layout_states_the_layers_the_layering_test_enforces():
    from test_layering import LAYERS  # tests/test_layering.py

    text = " ".join((DOCS / "layout.md").read_text().split())
    order = f"{LAYERS[0]}, {LAYERS[1]} → " + " → ".join(LAYERS[2:])
    assert f"Layers import only downwards: {order}." in text
    folders = [line.split()[0] for line in (DOCS / "layout.md").read_text().split("```\n", 2)[1].splitlines()
               if line.startswith("prosfi/")]
    assert [f.split("/")[1] for f in folders if f.count("/") == 2] == list(LAYERS)  # the tree in layer order
