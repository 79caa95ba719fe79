"""Shared pieces of the serve tests: logic problems from prosfi's generators, completions, servers."""

from __future__ import annotations

import json
from contextlib import contextmanager

from prosfi.data.gold import gold_completion, sloppy_completion
from prosfi.data.problem import Problem
from prosfi.eval.sources import load_source
from prosfi.serve.app import create_app
from prosfi.serve.config import ServeConfig, ServeSettings
from prosfi.serve.runner import running
from prosfi.verify.config import VerifierConfig

OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}
# FaultBackend (prosfi.verify.testing) kills its worker on a conclusion whose predicate is `Crash`
CRASH = Problem.from_dict({
    "id": "crash-1", "kind": "true_false_uncertain", "goal": "Crash tom", "options": OPTIONS, "answer": "A",
    "premises": [{"id": "h1", "formal": "∀ x, Cat x → Crash x"}, {"id": "h2", "formal": "Cat tom"}]})
CRASH_TEXT = ('<think>t</think><steps>[{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Crash tom", '
              '"rule": "mp"}]</steps><answer>A</answer>')


HANG = Problem.from_dict({**CRASH.to_dict(), "id": "hang-1", "goal": "Hang tom",
                          "premises": [{"id": "h1", "formal": "∀ x, Cat x → Hang x"}, {"id": "h2", "formal": "Cat tom"}]})
HANG_TEXT = CRASH_TEXT.replace("Crash", "Hang")


def logic_problems() -> list[Problem]:
    return load_source("kk:2..3", count=3).problems + load_source("fol:easy", count=3).problems


def completions(problems: list[Problem]) -> list[dict]:
    """Gold, sloppy, wrong-answer and malformed completions: every reward level appears."""
    out = []
    for p in problems:
        gold = gold_completion(p)
        out.append({"problem_id": p.id, "completion": gold})
        sloppy = sloppy_completion(p)
        if sloppy:
            out.append({"problem_id": p.id, "completion": sloppy})
        out.append({"problem_id": p.id, "completion": gold.replace("<answer>", "<answer>not ")})
        out.append({"problem_id": p.id, "completion": "no tags at all"})
    out.append({"problem_id": "nope", "completion": "x"})
    out.append({"problem_id": problems[0].id})
    out.append({"problem_id": problems[0].id, "completion": [{"role": "assistant", "content": out[0]["completion"]}]})
    return out


def write_jsonl(path, rows) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def settings(**serve) -> ServeSettings:
    backends = serve.pop("backends", None)
    extra = {"timeout_ms": serve.pop("timeout_ms")} if "timeout_ms" in serve else {}
    vcfg = VerifierConfig(workers=1, **extra) if backends is None else VerifierConfig(
        workers=1, backends=backends, truth_table=False, **extra)
    return ServeSettings(serve=ServeConfig(**serve), verifier=vcfg)


@contextmanager
def server(st: ServeSettings, port: int | None = None):
    """(url, app) of a server on a free loopback port, always shut down."""
    app = create_app(st)
    with running(app, port=port) as url:
        yield url, app
