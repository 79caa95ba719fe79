"""Problems for a training run, from the dataset spec in the script arguments.

`dataset:` names a source registered in `prosfi.data.sources` (or an alias of one), whose `train` loader draws
the problems; the rows TRL sees are built from these in `prosfi.train.rows`. Generators are seeded, so a
recipe names its data exactly. A file dataset's problems are split here into the run's disjoint sets.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from prosfi.data.problem import Problem


def generate_problems(spec: str, count: int, seed: int = 0, difficulty: str | None = None,
                      path: str | None = None, exclude_uncertain: bool = False,
                      toy_layout: str = "shuffled") -> list[Problem]:
    """Problems for recipe dataset `spec`: any name or alias of a registered source that recipes can use
    (`prosfi.data.sources.names("train")`), its domains loaded first (quantity gold chains need their rules)."""
    from prosfi.data.sources import TrainDraw
    from prosfi.domains import domain_for

    source = dataset_source(spec)
    for kind in source.kinds:  # gold chains are built under their domain's rules
        domain_for(kind)
    problems = source.train(TrainDraw(count, seed, difficulty, path, exclude_uncertain, toy_layout))
    if exclude_uncertain:
        problems = [p for p in problems if p.answer_label != "Uncertain"][:count]
    if not problems:
        raise ValueError(f"dataset {spec!r} produced no problems (size {count}, difficulty {difficulty!r})")
    return problems


def dataset_source(name: str):
    """The registered source a recipe's `dataset:` names; ValueError in one line naming the known ones."""
    from prosfi.data import sources

    try:
        return sources.get(name, "train", what="name")
    except sources.SpecError as exc:
        raise ValueError(f"dataset: {exc}") from None


def from_script_args(script: Any, count: int | None = None, seed_offset: int = 0) -> list[Problem]:
    """Problems as the script arguments describe them; `seed_offset` draws a disjoint generated set. The GRPO
    set (no `count`, no offset) of a file dataset is its share of the file (`file_split`)."""
    if is_file_dataset(script) and count is None and seed_offset == 0:
        return list(file_split(script).grpo)
    if script.dataset_size == REST and count is None:
        raise ValueError(f"dataset_size {REST} (every problem of the file not drawn for another set) is for file "
                         f"datasets ({', '.join(file_datasets())}); give dataset {script.dataset!r} a number")
    return generate_problems(
        script.dataset,
        count if count is not None else script.dataset_size,
        seed=script.dataset_seed + seed_offset,
        difficulty=script.dataset_difficulty,
        path=script.dataset_path,
        # `chain_uncertain: exclude` leaves Uncertain problems out, like dataset_exclude_uncertain
        exclude_uncertain=bool(script.dataset_exclude_uncertain)
        or getattr(script, "chain_uncertain", "verify") == "exclude",
        toy_layout=getattr(script, "toy_layout", "shuffled"),
    )


# --- file datasets: one finite, ordered pool split into disjoint sets ------------------------------------------

REST = -1  # dataset_size of a file dataset: every problem not drawn for the warm-up or held out


def file_datasets() -> tuple[str, ...]:
    """The recipe datasets read from a file (or a hub file)."""
    from prosfi.data import sources

    return tuple(n for n in sources.names("train") if sources.SOURCES[n].file)


def is_file_dataset(script: Any) -> bool:
    """A dataset read from a file (or a hub file): a fixed list, which seeds cannot redraw."""
    return dataset_source(script.dataset).file


@dataclass(frozen=True)
class FileSplit:
    """A file's problems cut into the run's sets, in file order: GRPO the first `dataset_size` (or, with
    dataset_size -1, all that the other sets leave), the SFT warm-up the `sft_size` after them; the held-out
    sets from the file's end (the last `eval_held_out` for the evaluation before and after GRPO, the
    `sft_format_check` before those for the warm-up's format gate), so they stay the same when an ablation
    changes the training share. A problem equal in content to one of an earlier set is dropped from the later
    one (duplicate questions in a file)."""

    source: str
    total: int
    grpo: tuple
    sft: tuple
    gate: tuple
    held_out: tuple

    def describe(self, sft: bool = True, grpo: bool = True) -> str:
        parts = [f"{len(self.grpo)} GRPO problems"] if grpo else []
        if sft:
            parts.append(f"{len(self.sft)} SFT problems")
        if self.gate:
            parts.append(f"{len(self.gate)} format-gate problems")
        if self.held_out:
            parts.append(f"{len(self.held_out)} held-out problems")
        return f"{', '.join(parts)} (of {self.source}'s {self.total})"


def gate_size(script: Any, sft: bool | None = None) -> int:
    """Prompts of the warm-up's format gate (`sft_format_check`), 0 when the recipe has no gate."""
    warm_up = script.sft if sft is None else sft
    rate = getattr(script, "sft_min_format_rate", 0.0) or 0.0
    return max(1, int(script.sft_format_check)) if warm_up and rate > 0 else 0


def file_split(script: Any, sft: bool | None = None) -> FileSplit:
    """The run's sets of a file dataset (see `FileSplit`), or ValueError in one line naming the keys to change
    when the file cannot fill them. `sft` overrides the recipe's `sft` (`prosfi sft` warms up whatever it says)."""
    warm_up = script.sft if sft is None else sft
    pool = _file_pool(script)
    source = Path(script.dataset_path).name if script.dataset_path else script.dataset
    total = len(pool)
    asked = {"sft_size": script.sft_size if warm_up else 0, "sft_format_check": gate_size(script, warm_up),
             "eval_held_out": max(0, int(script.eval_held_out))}
    reserved = sum(asked.values())
    named = ", ".join(f"{k} {v}" for k, v in asked.items() if v)
    where = script.dataset_path or script.dataset
    room = total - reserved
    if room < 1:
        raise ValueError(f"dataset_path {where}: {total} usable problems, but the warm-up and held-out sets alone "
                         f"ask for {reserved} ({named}) and GRPO needs some; lower "
                         f"{' or '.join(k for k, v in asked.items() if v)}")
    n_grpo = room if script.dataset_size == REST else int(script.dataset_size)
    if n_grpo < 1 or n_grpo > room:
        kept = f" and {reserved} are kept for {named}" if reserved else ""
        raise ValueError(f"dataset_size {script.dataset_size}: {where} has {total} usable problems{kept}, so GRPO can "
                         f"have 1 to at most {room}; lower dataset_size, or set it to {REST} (every problem not "
                         "drawn for another set)")
    n_sft, n_gate, n_eval = asked["sft_size"], asked["sft_format_check"], asked["eval_held_out"]
    sets = [pool[:n_grpo], pool[n_grpo:n_grpo + n_sft], pool[total - n_eval - n_gate:total - n_eval],
            pool[total - n_eval:]]
    seen: set = set()
    kept_sets = []
    for problems in sets:  # a later set drops what an earlier one holds (GRPO, SFT, gate, then held-out)
        keys = [_content_key(p) for p in problems]
        kept_sets.append(tuple(p for p, k in zip(problems, keys) if k not in seen))
        seen.update(keys)
    for name, key, asked_n, got in (("SFT", "sft_size", n_sft, kept_sets[1]),
                                    ("format-gate", "sft_format_check", n_gate, kept_sets[2]),
                                    ("held-out", "eval_held_out", n_eval, kept_sets[3])):
        if asked_n and not got:
            raise ValueError(f"{key} {asked_n}: every {name} problem of {where} repeats a training problem; use a "
                             "file without duplicate questions")
    return FileSplit(source, total, *kept_sets)


def _content_key(problem: Any) -> tuple:
    from prosfi.domains import domain_for

    return domain_for(problem).content_key(problem)


def _file_pool(script: Any) -> tuple:
    """Every usable problem of the recipe's file, in file order (read once per file version)."""
    path = script.dataset_path
    stamp = None
    if path and Path(path).is_file():
        st = Path(path).stat()
        stamp = (st.st_mtime_ns, st.st_size)
    elif dataset_source(script.dataset).needs_path:
        raise ValueError(f"dataset_path: no such file {path}")
    exclude = bool(script.dataset_exclude_uncertain) or getattr(script, "chain_uncertain", "verify") == "exclude"
    return _read_pool(script.dataset, path, stamp, script.dataset_difficulty, exclude)


@lru_cache(maxsize=4)
def _read_pool(spec: str, path: str | None, stamp: tuple | None, difficulty: str | None, exclude: bool) -> tuple:
    return tuple(generate_problems(spec, sys.maxsize, difficulty=difficulty, path=path, exclude_uncertain=exclude))
