"""One PRM interface, two objectives: `score_steps(items) -> [P(step is good)]`.

- `sft` (FoVer): a causal LM trained to answer `correct`/`incorrect`; the score is P(correct) from
  the next-token distribution after the question, renormalised over the two label words' first
  tokens (the rest of the vocabulary is not an answer).
- `pairwise` (NS-PRM): a sequence-classification model (a linear head) trained with a margin ranking
  loss; the score is σ(head) on the step's last token.

A trained PRM directory holds the model, its tokenizer and `prosfi_prm.json` naming the objective.
An item is `(problem prompt, steps so far, step)`; steps are objects or `Step`s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from prosfi.prm.inputs import CORRECT, INCORRECT, judge_messages, label_message, pairwise_text

MARKER = "prosfi_prm.json"
OBJECTIVES = ("sft", "pairwise")

Item = tuple[str, Sequence[Any], Any]


class StepScorer(Protocol):
    """What rerank and search need from a PRM (a trained one or a stub in tests)."""

    def score_steps(self, items: Sequence[Item]) -> list[float]: ...


def write_marker(directory: str | Path, objective: str, **extra: Any) -> None:
    Path(directory, MARKER).write_text(json.dumps({"objective": objective, **extra}, indent=2) + "\n")


def read_marker(directory: str | Path) -> dict[str, Any]:
    path = Path(directory, MARKER)
    if not path.is_file():
        raise ValueError(f"{directory} is not a trained PRM (no {MARKER}); train one with `prosfi prm train`")
    info = json.loads(path.read_text())
    if info.get("objective") not in OBJECTIVES:
        raise ValueError(f"{path}: objective {info.get('objective')!r} is not one of {', '.join(OBJECTIVES)}")
    return info


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class _TorchPRM:
    def __init__(self, model, tokenizer, batch_size: int = 16, max_length: int = 4096) -> None:
        import torch

        self.model, self.tokenizer = model.eval(), tokenizer
        self.batch_size, self.max_length = batch_size, max_length
        self.device = next(model.parameters()).device
        self.calls = 0  # steps scored
        self._torch = torch

    def score_steps(self, items: Sequence[Item]) -> list[float]:
        out: list[float] = []
        for start in range(0, len(items), self.batch_size):
            out.extend(self._batch(list(items[start:start + self.batch_size])))
        self.calls += len(items)
        return out

    def _pad(self, seqs: list[list[int]], left: bool):
        torch = self._torch
        width = max(len(s) for s in seqs)
        pad = self.tokenizer.pad_token_id
        ids = torch.full((len(seqs), width), pad, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, s in enumerate(seqs):
            if left:
                ids[row, width - len(s):], mask[row, width - len(s):] = torch.tensor(s), 1
            else:
                ids[row, :len(s)], mask[row, :len(s)] = torch.tensor(s), 1
        return ids.to(self.device), mask.to(self.device)

    def _ids(self, text: str) -> list[int]:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return ids[-self.max_length:]


class GenerativePRM(_TorchPRM):
    """FoVer: P(`correct`) for the next token after the judge question."""

    objective = "sft"

    def __init__(self, model, tokenizer, **kwargs: Any) -> None:
        super().__init__(model, tokenizer, **kwargs)
        self.correct_id, self.incorrect_id = self._label_ids()

    def _render(self, messages: list[dict[str, str]], generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)

    def _label_ids(self) -> tuple[int, int]:
        """The first token each label word adds after the generation prompt (as TRL's SFT tokenises it)."""
        probe = judge_messages("probe", [], {"id": "s1", "dependencies": [], "conclusion": "A", "rule": ""})
        prompt = self._ids(self._render(probe, True))
        ids = []
        for word in (True, False):
            full = self._ids(self._render(probe + label_message(word), False))
            k = _common_prefix(prompt, full)
            ids.append(full[k])
        if ids[0] == ids[1]:
            raise ValueError(f"{CORRECT!r} and {INCORRECT!r} start with the same token; the PRM cannot tell them apart")
        return ids[0], ids[1]

    def _batch(self, items: list[Item]) -> list[float]:
        torch = self._torch
        seqs = [self._ids(self._render(judge_messages(p, prefix, step), True)) for p, prefix, step in items]
        ids, mask = self._pad(seqs, left=True)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.no_grad():
            logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions).logits[:, -1, :]
        pair = torch.stack([logits[:, self.correct_id], logits[:, self.incorrect_id]], dim=-1).float()
        return torch.softmax(pair, dim=-1)[:, 0].tolist()


class HeadPRM(_TorchPRM):
    """NS-PRM: σ(linear head) on the step's last token."""

    objective = "pairwise"

    def _batch(self, items: list[Item]) -> list[float]:
        torch = self._torch
        seqs = [self._ids("".join(pairwise_text(p, prefix, step))) for p, prefix, step in items]
        ids, mask = self._pad(seqs, left=False)
        with torch.no_grad():
            logits = self.model(input_ids=ids, attention_mask=mask).logits[:, 0]
        return torch.sigmoid(logits.float()).tolist()


def load_prm(directory: str | Path, device: str | None = None, batch_size: int = 16) -> _TorchPRM:
    """A trained PRM from `directory` (written by `prosfi prm train`)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

    info = read_marker(directory)
    tokenizer = AutoTokenizer.from_pretrained(str(directory))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if info["objective"] == "sft":
        model = AutoModelForCausalLM.from_pretrained(str(directory), dtype=torch.float32).to(device)
        return GenerativePRM(model, tokenizer, batch_size=batch_size)
    model = AutoModelForSequenceClassification.from_pretrained(str(directory), num_labels=1,
                                                               dtype=torch.float32).to(device)
    model.config.pad_token_id = tokenizer.pad_token_id
    return HeadPRM(model, tokenizer, batch_size=batch_size)


__all__ = [
    "MARKER",
    "OBJECTIVES",
    "GenerativePRM",
    "HeadPRM",
    "Item",
    "StepScorer",
    "load_prm",
    "read_marker",
    "write_marker",
]
