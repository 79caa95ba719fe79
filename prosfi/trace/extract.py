"""Split a completion into its `<think>`, `<steps>` and `<answer>` blocks.

The layout is a contract with the policy (docs/rewards.md, "Format"); anything that bends it is
a format failure with a reason, never an exception: the trainer must not crash on a completion.
Tag-stuffing (a second `<answer>`, a `<steps>` hidden in the reasoning, text after `</answer>`)
is rejected by counting every tag over the whole text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

TAGS = ("<think>", "</think>", "<steps>", "</steps>", "<answer>", "</answer>")
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class Blocks:
    """The three blocks of a well-laid-out completion, inner text as written (answer stripped)."""

    think: str
    steps: str
    answer: str


@dataclass(frozen=True)
class Extraction:
    """`blocks` when the layout is right, else None and a `reason`."""

    blocks: Blocks | None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.blocks is not None


def with_reasoning(reasoning: Any, text: str) -> str:
    """`text` with reasoning delivered beside it (a chat message's `reasoning_content`, as TRL with a
    response schema, vLLM's reasoning parsers and verifiers give it) put back as its `<think>` block;
    `text` unchanged when there is none or when it already has a `<think>` block (or its closer)."""
    if not isinstance(reasoning, str) or not reasoning.strip() or "<think>" in text or "</think>" in text:
        return text
    return f"<think>{reasoning}</think>{text}"


def completion_text(completion: Any) -> str:
    """The assistant text of a TRL completion: a plain string, or a conversational list of messages
    (`[{"role": "assistant", "content": ...}]`, content a string or a list of text parts). A message's
    `reasoning_content` (reasoning parsed out by a response schema) is its `<think>` block."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, (list, tuple)):
        parts: list[str] = []
        for message in completion:
            if not isinstance(message, dict) or message.get("role", "assistant") != "assistant":
                continue
            content = message.get("content", "")
            text = ""
            if isinstance(content, str):
                text = content
            elif isinstance(content, list):
                text = "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
            parts.append(with_reasoning(message.get("reasoning_content") or message.get("reasoning"), text))
        return "".join(parts)
    raise TypeError(f"a completion must be a string or a list of messages, not {type(completion).__name__}")


def strip_fence(text: str) -> str:
    """Drop surrounding whitespace and one Markdown code fence (```json … ```) if present."""
    text = text.strip()
    m = _FENCE.match(text)
    return m.group(1).strip() if m else text


def extract_blocks(text: str) -> Extraction:
    """Find exactly one of each block, in order. A missing `<think>` opener is tolerated (chat
    templates that prefill it in the prompt); a missing closer is not."""
    counts = {tag: text.count(tag) for tag in TAGS}
    for tag in TAGS:
        n = counts[tag]
        if n > 1:
            return Extraction(None, f"{n} {tag} tags (exactly one allowed)")
        if n == 0 and tag != "<think>":
            return Extraction(None, f"missing {tag}")
    positions = [text.find(tag) for tag in TAGS]
    if counts["<think>"] == 0:
        positions[0] = -1
        think_start = 0
    else:
        think_start = positions[0] + len("<think>")
    order = [p for p in positions if p >= 0]
    if order != sorted(order):
        return Extraction(None, "blocks out of order (expected <think>, <steps>, <answer>)")
    think = text[think_start:positions[1]]
    steps = text[positions[2] + len("<steps>"):positions[3]]
    answer = text[positions[4] + len("<answer>"):positions[5]].strip()
    tail = text[positions[5] + len("</answer>"):]
    if tail.strip():
        return Extraction(None, f"text after </answer>: {clip(tail.strip())!r}")
    if not answer:
        return Extraction(None, "empty <answer> block")
    return Extraction(Blocks(think=think, steps=steps, answer=answer))


def clip(s: str, n: int = 40) -> str:
    """`s` cut to `n` characters with an ellipsis: model text quoted in a reason stays one short line."""
    return s if len(s) <= n else s[: n - 1] + "…"


__all__ = ["TAGS", "Blocks", "Extraction", "clip", "completion_text", "extract_blocks", "strip_fence", "with_reasoning"]
