"""Problems for the PRM commands, from a `--data` spec (temporary: a Problem JSONL path)."""

from __future__ import annotations


def load_problems(spec: str) -> list:
    from prosfi.data.problem import read_problems

    return list(read_problems(spec))
