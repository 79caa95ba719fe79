"""The command blocks of README.md and docs/*.md, run as written, so the manual cannot drift.

Every ```bash (or ```sh) block of those files is one test, named `FILE:LINE`. Its commands run in
order in a scratch folder of that file (one per file, shared by its blocks, holding the shipped
`examples/` and `recipes/`), so a block may read what an earlier block of the same file wrote.
A block is left out only when the line before it is `<!-- docs-test: skip (REASON) -->`; the
reason is reported. A command that exits non-zero, prints a traceback, or does not write the
`-o`/`--output`/`--output_dir`/`--out` it names fails the test with its file and line.

Adjustments that keep the suite fast, all here: `--count` values above `FAST_ABOVE` become
`FAST_COUNT`; `prosfi train` runs as a dry run (`--dry-run` added; a real run takes minutes); the
README's main command really trains, shortened by `MAIN_SHORTENED`, in its own `slow` test; a block
that trains for real (`prosfi sft`: the PRM quick start) is marked `slow`.
`RECIPE.yaml` stands for the shipped demo recipe. `prosfi …` runs as `python -m prosfi.cli …`;
any other command line runs under bash with a `prosfi` on PATH.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
SHIPPED = ("examples", "recipes")
FAST_COUNT, FAST_ABOVE = 6, 20
MAIN_COMMAND = "prosfi train recipes/demo/cpu_chains.yaml"
# what the main command gets appended so that a test run takes seconds, not minutes
MAIN_SHORTENED = ["--sft_max_steps", "2", "--sft_size", "16", "--max_steps", "1", "--dataset_size", "8",
                  "--per_device_train_batch_size", "8", "--eval_held_out", "8", "--save_strategy", "no",
                  "--tiny.corpus_problems", "20", "--disable_tqdm", "true"]
PLACEHOLDERS = {"RECIPE.yaml": "recipes/demo/cpu_chains.yaml"}
OUTPUT_FLAGS = ("-o", "--output", "--output_dir", "--out")
SKIP_RE = re.compile(r"^<!--\s*docs-test:\s*skip\s*\((?P<why>[^)].*)\)\s*-->\s*$")
MARKER_RE = re.compile(r"<!--\s*docs-test")
PENDING_DOCS: set[str] = set()  # docs linked from the README but not written yet
TIMEOUT_S = 300
SLOW_COMMANDS = ("prosfi sft ",)


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int                                 # the line of the opening fence
    commands: tuple[tuple[int, str], ...]     # (line, command), continuations joined, comments dropped
    skip: str | None

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def doc_blocks(doc: Path) -> list[Block]:
    """The bash blocks of one Markdown file, with the skip reason of the line before each."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        fence = lines[i].strip()
        if not fence.startswith("```"):
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```")), len(lines))
        if fence[3:].strip() in ("bash", "sh"):
            match = SKIP_RE.match(lines[i - 1].strip()) if i else None
            commands, pending, start = [], "", 0
            for n in range(i + 1, end):
                text = lines[n].strip()
                if not pending:
                    start = n + 1
                    if not text or text.startswith("#"):
                        continue
                text = pending + text
                if text.endswith("\\"):
                    pending = text[:-1].rstrip() + " "
                    continue
                pending = ""
                commands.append((start, re.sub(r"\s+#.*$", "", text)))
            blocks.append(Block(doc, i + 1, tuple(commands), match["why"].strip() if match else None))
        i = end + 1
    return blocks


BLOCKS = [b for doc in DOCS for b in doc_blocks(doc)]
ALL_COMMANDS = [c for b in BLOCKS for _, line in b.commands for c in (p.strip() for p in line.split("&&"))]


def adjusted(argv: list[str]) -> list[str]:
    argv = [PLACEHOLDERS.get(tok, tok) for tok in argv]
    for i, tok in enumerate(argv[:-1]):
        if tok == "--count" and argv[i + 1].isdigit() and int(argv[i + 1]) > FAST_ABOVE:
            argv[i + 1] = str(FAST_COUNT)
    if argv[:2] == ["prosfi", "train"] and "--help" not in argv and "--dry-run" not in argv:
        argv.append("--dry-run")
    return argv


def _env(where: Path) -> dict:
    shim = where / ".bin"
    if not shim.is_dir():
        shim.mkdir()
        (shim / "prosfi").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m prosfi.cli "$@"\n')
        (shim / "prosfi").chmod(0o755)
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline",
            "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}"}


def run_line(line: str, where: Path) -> tuple[list[str], subprocess.CompletedProcess]:
    """One command line of a block: `prosfi …` parts (joined by &&) adjusted and run directly,
    anything else under bash as written."""
    parts = [p.strip() for p in line.split("&&")]
    env = _env(where)
    if not all(p.startswith("prosfi ") for p in parts):
        proc = subprocess.run(["bash", "-c", line], check=False, cwd=where, env=env, capture_output=True,
                              text=True, timeout=TIMEOUT_S)
        return shlex.split(line), proc
    for part in parts:
        argv = adjusted(shlex.split(part))
        proc = subprocess.run([sys.executable, "-m", "prosfi.cli", *argv[1:]], check=False, cwd=where, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
        if proc.returncode != 0:
            break
    return argv, proc


def run_block(block: Block, where: Path) -> None:
    for line_no, line in block.commands:
        argv, proc = run_line(line, where)
        here = f"{block.doc.relative_to(ROOT)}:{line_no}: `{line}`"
        assert proc.returncode == 0, f"{here} exited {proc.returncode}\n{proc.stderr[-3000:]}"
        assert "Traceback" not in proc.stderr, f"{here} printed a traceback\n{proc.stderr[-3000:]}"
        for i, tok in enumerate(argv[:-1]):
            if tok in OUTPUT_FLAGS and argv[i + 1] != "-" and "--dry-run" not in argv and "--help" not in argv:
                assert (where / argv[i + 1]).exists(), f"{here} did not write {argv[i + 1]}"


@pytest.fixture(scope="session")
def scratch(tmp_path_factory):
    """One scratch folder per documentation file, and the blocks already run in it."""
    folders: dict[Path, tuple[Path, set]] = {}

    def get(doc: Path) -> tuple[Path, set]:
        if doc not in folders:
            where = tmp_path_factory.mktemp(doc.stem.replace(".", "_"))
            for name in SHIPPED:
                (where / name).symlink_to(ROOT / name)
            folders[doc] = (where, set())
        return folders[doc]

    return get


def _param(block: Block):
    """A block that trains a model for real (`prosfi sft`, the PRM quick start) is marked `slow`."""
    slow = any(part.strip().startswith(SLOW_COMMANDS) for _, line in block.commands for part in line.split("&&"))
    return pytest.param(block, id=block.name, marks=[pytest.mark.slow] if slow else [])


def _run_doc_block(block: Block, scratch) -> None:
    if block.skip:
        pytest.skip(block.skip)
    where, done = scratch(block.doc)
    for earlier in BLOCKS:  # what this block may read: the earlier blocks of its file, once
        if earlier.doc == block.doc and earlier.line < block.line and not earlier.skip and earlier.line not in done:
            run_block(earlier, where)
            done.add(earlier.line)
    run_block(block, where)
    done.add(block.line)


def _doc_class(doc: Path) -> type:
    """One test class a documentation file: its blocks share a scratch folder, so under pytest-xdist
    (`--dist loadscope`: a class's tests go to one worker, in order) a block never re-runs the earlier
    blocks of its file on another worker."""

    @pytest.mark.parametrize("block", [_param(b) for b in BLOCKS if b.doc == doc])
    def test_doc_block_runs(self, block, scratch):
        _run_doc_block(block, scratch)

    name = "TestDoc_" + re.sub(r"\W", "_", doc.stem)
    return type(name, (), {"test_doc_block_runs": test_doc_block_runs, "__doc__": f"The bash blocks of {doc.name}."})


for _doc in DOCS:
    if any(b.doc == _doc for b in BLOCKS):
        _cls = _doc_class(_doc)
        globals()[_cls.__name__] = _cls


def test_the_docs_have_example_commands():
    assert MAIN_COMMAND in ALL_COMMANDS and any(MAIN_COMMAND in line for b in doc_blocks(README)
                                                for _, line in b.commands)
    assert any(c.startswith("prosfi check examples/") for c in ALL_COMMANDS)
    assert sum(c.startswith("prosfi data ") for c in ALL_COMMANDS) >= 5
    assert sum(not b.skip for b in BLOCKS) >= 5  # the parser finds the runnable blocks


def test_every_docs_test_marker_is_well_formed():
    """A marker names its reason and sits on the line right before a bash block."""
    for doc in DOCS:
        lines = doc.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines):
            if MARKER_RE.search(line):
                assert SKIP_RE.match(line.strip()), f"{doc.name}:{n + 1}: write <!-- docs-test: skip (REASON) -->"
                after = lines[n + 1].strip() if n + 1 < len(lines) else ""
                assert after in ("```bash", "```sh"), f"{doc.name}:{n + 1}: the marker must precede a ```bash block"


def test_the_readme_stands_alone():
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        assert "DESIGN.md" not in text and "../shared" not in text, doc.name  # not in the repository


def test_the_readme_is_a_front_door():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 220, f"README.md has {len(lines)} lines; move detail to docs/"
    assert ["python", "-m", "pytest", "-q"] in [shlex.split(line) for b in doc_blocks(README)
                                                for _, line in b.commands]  # what .ci/run runs


def _anchors(text: str) -> set[str]:
    out, fence = set(), False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            out.add(re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-"))
    return out


def test_doc_links_resolve():
    """Relative links between README and docs/ point at files (and headings) that exist."""
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for link in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", link):
                continue
            path, _, anchor = link.partition("#")
            target = (doc.parent / path).resolve() if path else doc
            if target.name in PENDING_DOCS and not target.exists():
                continue
            assert target.exists(), f"{doc.name}: link to {link}: no such file"
            if anchor and target.suffix == ".md":
                assert anchor in _anchors(target.read_text(encoding="utf-8")), f"{doc.name}: no heading #{anchor}"


@pytest.mark.slow
@pytest.mark.timeout(1000)  # its own limit is 900 s, above the suite's 600 s backstop (pyproject)
def test_readme_main_command_trains(tmp_path):
    """The README's main command, shortened by MAIN_SHORTENED, trains and prints its summary; the
    demo's held-out evaluations then compare as docs/training.md shows."""
    for name in SHIPPED:
        (tmp_path / name).symlink_to(ROOT / name)
    argv = shlex.split(MAIN_COMMAND) + MAIN_SHORTENED
    proc = subprocess.run([sys.executable, "-m", "prosfi.cli", *argv[1:]], check=False, cwd=tmp_path,
                          env=_env(tmp_path), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "== prosfi run summary" in proc.stdout and "held-out problems (8," in proc.stdout
    (run,) = [d for d in (tmp_path / "runs").glob("cpu_chains*") if (d / "summary.json").is_file()]
    assert (run / "metrics.jsonl").is_file() and (run / "reward_curve.png").is_file()
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["eval_before"]["n"] == summary["eval_after"]["n"] == 8
    compare = [b for b in BLOCKS if any("eval compare runs/cpu_chains/" in line for _, line in b.commands)]
    assert compare, "docs/training.md shows how to compare the demo's evaluations"
    if run.name != "cpu_chains":
        (tmp_path / "runs" / "cpu_chains").symlink_to(run)
    for block in compare:
        for line_no, line in block.commands:
            argv, done = run_line(line, tmp_path)
            assert done.returncode == 0, f"{block.doc.name}:{line_no}: {done.stderr[-2000:]}"
