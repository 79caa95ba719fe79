"""Given extraction (placeholder until the full extractor lands)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Given:
    id: str
    value: str
    unit: str
    text: str
    start: int
    end: int


def extract_givens(question: str) -> list[Given]:
    raise NotImplementedError
