"""The `lean` / `lean_dojo` backends: availability messages, verdict plumbing, and real Lean checks.

Tests without the `lean` marker point the backend's pool at tests/standin_repl.py (not Lean):
they check how REPL outcomes become verdicts and that a batch keeps one verdict per check in
order, never whether a step is valid. Tests marked `lean` run real checks where `lake` exists.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from prosfi.logic.parser import parse
from prosfi.logic.signature import check_signature
from prosfi.verify.backend import Check
from prosfi.verify.lean import LeanBackend, LeanConfig, LeanDojoBackend
from prosfi.verify.lean.config import PROJECT_ENV
from prosfi.verify.verdict import Status

STANDIN = str(Path(__file__).with_name("standin_repl.py").resolve())
NO_LAKE = shutil.which("lake") is None


def _checks(*pairs: tuple[dict[str, str], str]):
    checks = [Check(tuple((k, parse(v)) for k, v in prem.items()), parse(concl)) for prem, concl in pairs]
    signature = check_signature([f for c in checks for _, f in c.premises] + [c.conclusion for c in checks])
    return checks, signature


@pytest.mark.skipif(not NO_LAKE, reason="checks the messages shown where Lean is missing")
def test_missing_lean_is_explained():
    reason = LeanBackend.unavailable()
    assert reason and "lake" in reason and "elan" in reason
    with pytest.raises(RuntimeError, match="'lean' verifier backend cannot run: no `lake` on PATH"):
        LeanBackend()


def test_missing_lean_dojo_is_explained():
    if LeanDojoBackend.unavailable() is None:
        pytest.skip("lean_dojo and Lean are installed here")
    reason = LeanDojoBackend.unavailable()
    assert "lean_dojo" in reason or "lake" in reason
    with pytest.raises(RuntimeError, match="lean_dojo"):
        LeanDojoBackend()


def test_registry_skips_lean_with_its_reason_when_asked_automatically():
    from prosfi.verify.registry import resolve

    if LeanBackend.unavailable() is None:
        pytest.skip("Lean is installed here")
    with pytest.warns(RuntimeWarning, match="'lean' skipped"):
        specs, skipped = resolve(("lean", "lean_dojo"))
    assert specs == [] and "lake" in skipped["lean"]


def test_project_is_found_from_setting_env_and_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv(PROJECT_ENV, raising=False)
    checkout = LeanConfig().project_dir()
    assert checkout is not None and (checkout / "lean-toolchain").exists()
    monkeypatch.setenv(PROJECT_ENV, str(tmp_path))
    assert LeanConfig().project_dir() == tmp_path
    assert LeanConfig(project="/elsewhere").project_dir() == Path("/elsewhere")


def test_lean_project_pins_matching_versions():
    project = Path(__file__).resolve().parents[1] / "lean_project"
    toolchain = (project / "lean-toolchain").read_text().strip()
    version = toolchain.split(":")[1]
    lakefile = (project / "lakefile.toml").read_text()
    assert lakefile.count(f'rev = "{version}"') == 2, "aesop and repl must be pinned to the toolchain's tag"
    header = (project / "ProsfiHeader.lean").read_text()
    assert "import Aesop" in header and "set_option autoImplicit false" in header


def test_verifier_builds_it_from_a_lean_config_it_carries():
    from types import SimpleNamespace

    config = LeanConfig(repl_command=(sys.executable, STANDIN), workers=1)
    backend = LeanBackend.from_config(SimpleNamespace(lean=config, timeout_ms=1000))
    assert backend.config is config
    backend.close()


def test_config_validation_names_the_field():
    with pytest.raises(ValueError, match="LeanConfig.workers"):
        LeanConfig(workers=0)
    with pytest.raises(ValueError, match="LeanConfig.tactics"):
        LeanConfig(tactics=())
    assert LeanConfig(tactics="simp_all | aesop").tactics == ("simp_all", "aesop")


def test_outcomes_become_verdicts_in_order_with_the_standin():
    # Plumbing only: the stand-in answers from markers (a premise named standin_error makes that
    # check's rendered theorem contain the marker), so valid/unknown here say nothing about logic.
    config = LeanConfig(repl_command=(sys.executable, STANDIN), workers=2, timeout_s=None)
    backend = LeanBackend(config)
    try:
        checks, signature = _checks(
            ({"h1": "A"}, "A"),
            ({"standin_error": "A"}, "A"),
            ({"standin_crash": "A"}, "A"),
            ({"standin_hang": "A"}, "A"),
            ({"h1": "C"}, "C"),
        )
        verdicts = backend.check_group(checks, signature, timeout_ms=1000)
        assert [v.status for v in verdicts] == [Status.VALID, Status.UNKNOWN, Status.UNKNOWN, Status.UNKNOWN,
                                                Status.VALID]
        assert all(v.backend == "lean" for v in verdicts)
        assert "error" in verdicts[1].detail and "crash" in verdicts[2].detail and "timeout" in verdicts[3].detail
        assert backend.check(checks[0], signature, 1000).status is Status.VALID
        other, other_sig = _checks(({"standin_error": "Q a"}, "Q a"))
        mixed = backend.check_many([(signature, checks[0]), (other_sig, other[0]), (signature, checks[4])], 1000)
        assert [v.status for v in mixed] == [Status.VALID, Status.UNKNOWN, Status.VALID]
        assert backend.check_group([], signature, 1000) == []
        assert not any(v.status is Status.INVALID for v in verdicts)  # Lean never claims a countermodel
    finally:
        backend.close()
    assert backend.in_worker is False


# ------------------------------------------------------------------ real Lean (skipped without lake)
@pytest.mark.lean
def test_real_lean_proves_valid_steps_and_not_invalid_ones():
    backend = LeanBackend(LeanConfig(workers=2, timeout_s=120))
    try:
        checks, signature = _checks(
            ({"h1": "∀ x, Kind x → Nice x", "h2": "Kind candy"}, "Nice candy"),
            ({"h1": "Xor' (Knight zoey) (Knave zoey)", "h2": "¬ Knave zoey"}, "Knight zoey"),
            ({"h1": "∀ x, Kind x → Nice x"}, "Nice candy"),
            ({"h1": "∀ x y, Loves x y → Loves y x", "h2": "Loves a b"}, "∃ x, Loves b x"),
            ({"h1": "a = b", "h2": "P a"}, "P b"),
        )
        verdicts = backend.check_group(checks, signature, timeout_ms=60_000)
    finally:
        backend.close()
    assert [v.status for v in verdicts] == [Status.VALID, Status.VALID, Status.UNKNOWN, Status.VALID,
                                            Status.VALID], [v.detail for v in verdicts]


@pytest.mark.lean
def test_real_lean_rejects_sorry_and_keyword_names_do_not_break_rendering():
    from prosfi.logic.ast import Const, Pred
    from prosfi.verify.lean.pool import ReplPool

    with ReplPool(LeanConfig(workers=1)) as pool:
        sorry = pool.run("theorem t : False := by sorry", 120)
        assert sorry.kind == "sorry"
    premises = (("h1", Pred("end", (Const("open"),))),)
    conclusion = Pred("end", (Const("open"),))
    backend = LeanBackend(LeanConfig(workers=1, timeout_s=120))
    try:
        verdict = backend.check(Check(premises, conclusion), check_signature([conclusion]), 60_000)
    finally:
        backend.close()
    assert verdict.status is Status.VALID, verdict.detail


# ------------------------------------------------------------------ LeanDojo worker plumbing
FAKE_LEAN_DOJO = '''
"""A fake `lean_dojo` for the worker's plumbing test (records calls; proves nothing)."""
import json, os
from dataclasses import dataclass

LOG = os.environ["FAKE_DOJO_LOG"]

def _log(**kw):
    with open(LOG, "a") as fh:
        fh.write(json.dumps(kw) + "\\n")

@dataclass(frozen=True)
class CommandState:
    id: int
    message: str | None = None

@dataclass(frozen=True)
class LeanError:
    error: str

class LeanGitRepo:
    @classmethod
    def from_path(cls, path):
        _log(event="from_path", path=str(path))
        return cls()

class Dojo:
    def __init__(self, entry, hard_timeout=None, additional_imports=[]):
        _log(event="dojo", file=str(entry[1]), line=entry[2], imports=list(additional_imports))
    def __enter__(self):
        return self, CommandState(0)
    def __exit__(self, *exc):
        _log(event="exit")
    def run_cmd(self, state, cmd):
        _log(event="run_cmd", state=state.id)
        if "bad_proof" in cmd:
            return LeanError("unsolved goals")
        if "uses_sorry" in cmd:
            return CommandState(state.id + 1, "warning: declaration uses 'sorry'")
        return CommandState(state.id + 1, "")
'''


def test_dojo_worker_speaks_the_repl_protocol_over_lean_dojo(tmp_path):
    from prosfi.verify.lean.repl import ReplDied, ReplProcess

    (tmp_path / "lean_dojo.py").write_text(FAKE_LEAN_DOJO)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "ProsfiHeader.lean").write_text("import Aesop\n\nnamespace Prosfi\nend Prosfi\n")
    log = tmp_path / "calls.jsonl"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "FAKE_DOJO_LOG": str(log)}
    cmd = [sys.executable, "-m", "prosfi.verify.lean.dojo_worker", "--project", str(project)]
    proc = ReplProcess(cmd, project, "import Aesop\nimport ProsfiHeader", start_timeout_s=60, env=env)
    try:
        assert proc.run("theorem ok", 60).ok
        assert proc.run("theorem bad_proof", 60).kind == "error"
        assert proc.run("theorem uses_sorry", 60).kind == "sorry"
    finally:
        proc.kill()
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    dojo = next(c for c in calls if c["event"] == "dojo")
    assert dojo == {"event": "dojo", "file": "ProsfiHeader.lean", "line": 4, "imports": ["Aesop"]}
    assert [c["state"] for c in calls if c["event"] == "run_cmd"] == [0, 0, 0]  # always from the header state

    env.pop("PYTHONPATH")
    with pytest.raises(ReplDied, match="lean_dojo is not installed"):
        ReplProcess(cmd, project, "import Aesop", start_timeout_s=60, env=env)


class StandinLeanBackend(LeanBackend):
    """`lean` pointed at the stand-in, importable by the verifier as 'test_lean_backend:StandinLeanBackend'."""

    @classmethod
    def unavailable(cls):
        return None

    @classmethod
    def from_config(cls, config):
        return cls(LeanConfig(repl_command=(sys.executable, STANDIN), workers=2, timeout_s=None))


def test_verifier_runs_lean_first_in_the_parent_then_z3():
    # Plumbing only: the stand-in "proves" whatever reaches it unless a symbol carries a marker;
    # what it leaves unknown must go on to Z3, which refutes the non-entailment.
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.verdict import Entailment
    from prosfi.verify.verifier import Verifier

    config = VerifierConfig(backends=(f"{__name__}:StandinLeanBackend", "z3"), workers=0, timeout_ms=2000)
    with Verifier(config) as verifier:
        verdicts = verifier.check_many([
            Entailment({"h1": "∀ x, P x → Q x", "h2": "P a"}, "Q a"),
            Entailment({"h1": "∀ x, standin_error x → Q x"}, "Q a"),
        ])
    assert verdicts[0].status is Status.VALID and verdicts[0].backend == "lean"
    assert verdicts[1].status is Status.INVALID and verdicts[1].backend == "z3"


def test_unavailable_explains_each_missing_piece(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_lake = bin_dir / "lake"  # only has to exist on PATH for this check; never run
    fake_lake.write_text("#!/bin/sh\nexit 1\n")
    fake_lake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv(PROJECT_ENV, raising=False)
    missing = LeanConfig(project=str(tmp_path / "nowhere")).unavailable()
    assert "no Lean project found" in missing and PROJECT_ENV in missing
    project = tmp_path / "proj"
    project.mkdir()
    (project / "lakefile.toml").write_text("")
    assert "not built: run `cd" in LeanConfig(project=str(project)).unavailable()
    (project / ".lake").mkdir()
    assert LeanConfig(project=str(project)).unavailable() is None
    assert LeanConfig(project=str(project)).command() == ["lake", "exe", "repl"]
    binary = project / ".lake" / "packages" / "REPL" / ".lake" / "build" / "bin" / "repl"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    assert LeanConfig(project=str(project)).command() == ["lake", "env", str(binary)]
