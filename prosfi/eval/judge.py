"""Optional LLM-judge soundness (the paper's GPT-judged metric) through an OpenAI-compatible endpoint.

Off by default. The judge sees the problem's premises and question and the whole completion, with the
prompt in `judge_prompt.txt` (or `--judge-prompt FILE`, with the same `{premises}`, `{question}`,
`{completion}` fields), and must end with `VERDICT: SOUND` or `VERDICT: UNSOUND`. A reply without a
verdict, or a request that failed after its retries, leaves the completion unjudged (None), so
`judge_soundness` is over judged completions only; the summary names the judge that ran.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from prosfi.data.problem import Problem

PROMPT_PATH = Path(__file__).with_name("judge_prompt.txt")
_VERDICT = re.compile(r"VERDICT:\s*(UNSOUND|SOUND)\b", re.IGNORECASE)


def parse_verdict(reply: str) -> bool | None:
    """True for SOUND, False for UNSOUND (the last verdict line counts), None if there is none."""
    found = _VERDICT.findall(reply or "")
    return None if not found else found[-1].upper() == "SOUND"


def judge_prompt(template: str, problem: Problem, completion: str) -> str:
    premises = "\n".join(f"{p.id}: {p.text or p.formal}" for p in problem.premises)
    question = problem.question or (f"Is the statement {problem.goal} true, false or uncertain?"
                                    if problem.goal else "Who is a knight and who is a knave?")
    return template.format(premises=premises, question=question, completion=completion)


class Judge:
    """An LLM judge at `url` serving `model`; `annotate` sets record["judge_sound"] in place."""

    def __init__(self, url: str, model: str, prompt_path: str | Path | None = None, concurrency: int = 8,
                 retries: int = 3, timeout_s: float = 300.0, max_tokens: int = 1024):
        from prosfi.eval.endpoint import EndpointConfig

        self.endpoint = EndpointConfig(url, model, concurrency=concurrency, retries=retries, timeout_s=timeout_s)
        self.template = Path(prompt_path or PROMPT_PATH).read_text(encoding="utf-8")
        self.max_tokens = max_tokens
        self.name = f"{model} @ {url}"

    def annotate(self, records: Sequence[dict[str, Any]], problems: Mapping[str, Problem]) -> None:
        import httpx

        from prosfi.eval.endpoint import EndpointError, chat_completion

        todo = [r for r in records if r.get("problem_id") in problems and r.get("format_ok")]

        def one(rec: dict[str, Any]) -> None:
            prompt = judge_prompt(self.template, problems[rec["problem_id"]], rec.get("completion", ""))
            try:
                reply, _ = chat_completion(client, self.endpoint, [{"role": "user", "content": prompt}],
                                           temperature=0.0, top_p=1.0, max_tokens=self.max_tokens)
            except EndpointError:
                rec["judge_sound"] = None
                return
            rec["judge_sound"] = parse_verdict(reply)

        with httpx.Client() as client, ThreadPoolExecutor(max(1, self.endpoint.concurrency)) as pool:
            list(pool.map(one, todo))
        for r in records:  # completions not in the format are unsound without asking
            if r.get("problem_id") in problems and not r.get("format_ok"):
                r["judge_sound"] = False


__all__ = ["Judge", "judge_prompt", "parse_verdict"]
