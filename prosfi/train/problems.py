"""Problems for a training run, from the dataset spec in the script arguments.

One function per source, all returning `Problem`s; the rows TRL sees are built from these in
`prosfi.train.rows`. Generators are seeded, so a recipe names its data exactly.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from prosfi.data.problem import Problem


def _people_range(difficulty: str | None, default: tuple[int, int] = (2, 3)) -> list[int]:
    """'3' -> [3]; '2-4' -> [2, 3, 4]; None -> the default range."""
    if not difficulty:
        lo, hi = default
    else:
        text = str(difficulty).strip()
        lo_s, _, hi_s = text.partition("-")
        try:
            lo, hi = int(lo_s), int(hi_s or lo_s)
        except ValueError as e:
            raise ValueError(f"dataset_difficulty: {difficulty!r} is not a people count like '3' or '2-4'") from e
    if lo > hi:
        raise ValueError(f"dataset_difficulty: {difficulty!r} has its bounds the wrong way round")
    return list(range(lo, hi + 1))


def knights_and_knaves(count: int, seed: int, difficulty: str | None = None) -> list[Problem]:
    """`count` K&K puzzles spread evenly over the people counts in `difficulty`."""
    from prosfi.data.kk import KKConfig, generate

    people = _people_range(difficulty)
    out: list[Problem] = []
    for i, n in enumerate(people):
        share = count // len(people) + (1 if i < count % len(people) else 0)
        if share:
            out.extend(generate(KKConfig(people=n), share, seed + 1000 * n))
    return out


def proverqa_generated(count: int, seed: int, difficulty: str | None = None) -> list[Problem]:
    """ProverQA-style problems from prosfi's local generator (no hub needed)."""
    from prosfi.data.pqa_gen import FOLGenConfig, generate

    return generate(FOLGenConfig(difficulty=difficulty or "medium"), count, seed)


def toy_chains(count: int, seed: int, difficulty: str | None = None, layout: str = "shuffled") -> list[Problem]:
    """The CPU demo's toy rule chains; `difficulty` is the depth range, e.g. '1-3' (default) or '2'. Drawn
    outside the evaluation share of the space (`prosfi eval --data toy` draws inside it)."""
    from prosfi.data.toy import ToyConfig, generate

    depths = _people_range(difficulty, default=(1, 3))
    return generate(ToyConfig(min_depth=depths[0], max_depth=depths[-1], layout=layout), count, seed, split="train")


def proverqa_hub(count: int, difficulty: str | None = None, path: str | None = None) -> list[Problem]:
    """opendatalab/ProverQA (a dev split, or the train file), or the same file read locally from `path`."""
    from prosfi.data.proverqa import load_proverqa

    return load_proverqa(difficulty or "hard", path=path, limit=count)


def physics(count: int, seed: int, difficulty: str | None = None) -> list[Problem]:
    """Generated physics problems with units (prosfi.data.physics), spread over the comma-separated
    difficulties in `difficulty` (default easy)."""
    from prosfi.data.physics import generate

    levels = [d.strip() for d in (difficulty or "easy").split(",") if d.strip()]
    out: list[Problem] = []
    for i, level in enumerate(levels):
        share = count // len(levels) + (1 if i < count % len(levels) else 0)
        if share:
            out.extend(generate(level, share, seed))
    return out


def gsm_symbolic(count: int, seed: int) -> list[Problem]:
    """GSM-Symbolic template problems through reasoning-gym (prosfi.data.gsm_symbolic)."""
    import prosfi.domains.quantity  # noqa: F401  (gold chains are built under its rules)
    from prosfi.data.gsm_symbolic import generate

    return generate(count, seed)


def gsm8k(path: str, count: int) -> list[Problem]:
    """The first `count` usable problems of a GSM8K JSONL file (prosfi.data.gsm8k)."""
    import prosfi.domains.quantity  # noqa: F401  (gold chains are built under its rules)
    from prosfi.data.gsm8k import load_gsm8k

    return load_gsm8k(path, limit=count)


def from_jsonl(path: str, count: int) -> list[Problem]:
    from prosfi.data.problem import read_problems

    out = []
    for problem in read_problems(path, validate=True):
        if len(out) >= count:
            break
        out.append(problem)
    return out


def generate_problems(spec: str, count: int, seed: int = 0, difficulty: str | None = None,
                      path: str | None = None, exclude_uncertain: bool = False,
                      toy_layout: str = "shuffled") -> list[Problem]:
    """Problems for dataset `spec` (kk, proverqa_gen, toy, proverqa_hub, jsonl; quantity: physics,
    gsm_symbolic, gsm8k)."""
    if spec == "kk":
        problems = knights_and_knaves(count, seed, difficulty)
    elif spec == "proverqa_gen":
        # about a third of generated problems are Uncertain: draw enough that `count` remain
        problems = proverqa_generated(2 * count if exclude_uncertain else count, seed, difficulty)
    elif spec == "toy":
        problems = toy_chains(count, seed, difficulty, toy_layout)
    elif spec == "proverqa_hub":
        problems = proverqa_hub(count, difficulty, path)
    elif spec == "jsonl":
        if not path:
            raise ValueError("dataset_path: required when dataset is 'jsonl'")
        problems = from_jsonl(path, count)
    elif spec == "physics":
        problems = physics(count, seed, difficulty)
    elif spec == "gsm_symbolic":
        problems = gsm_symbolic(count, seed)
    elif spec == "gsm8k":
        if not path:
            raise ValueError("dataset_path: required when dataset is 'gsm8k'")
        problems = gsm8k(path, count)
    else:
        raise ValueError(f"dataset: {spec!r} is not one of kk, proverqa_gen, toy, proverqa_hub, jsonl, physics, "
                         "gsm_symbolic, gsm8k")
    if exclude_uncertain:
        problems = [p for p in problems if p.answer_label != "Uncertain"][:count]
    if not problems:
        raise ValueError(f"dataset {spec!r} produced no problems (size {count}, difficulty {difficulty!r})")
    return problems


def from_script_args(script: Any, count: int | None = None, seed_offset: int = 0) -> list[Problem]:
    """Problems as the script arguments describe them; `seed_offset` draws a disjoint generated set. The GRPO
    set (no `count`, no offset) of a file dataset is its share of the file (`file_split`)."""
    if is_file_dataset(script) and count is None and seed_offset == 0:
        return list(file_split(script).grpo)
    if script.dataset_size == REST and count is None:
        raise ValueError(f"dataset_size {REST} (every problem of the file not drawn for another set) is for file "
                         f"datasets ({', '.join(FILE_DATASETS)}); give dataset {script.dataset!r} a number")
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

FILE_DATASETS = ("jsonl", "gsm8k", "proverqa_hub")
REST = -1  # dataset_size of a file dataset: every problem not drawn for the warm-up or held out


def is_file_dataset(script: Any) -> bool:
    """A dataset read from a file (or a hub file): a fixed list, which seeds cannot redraw."""
    return script.dataset in FILE_DATASETS


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
    elif script.dataset in ("jsonl", "gsm8k"):
        raise ValueError(f"dataset_path: no such file {path}")
    exclude = bool(script.dataset_exclude_uncertain) or getattr(script, "chain_uncertain", "verify") == "exclude"
    return _read_pool(script.dataset, path, stamp, script.dataset_difficulty, exclude)


@lru_cache(maxsize=4)
def _read_pool(spec: str, path: str | None, stamp: tuple | None, difficulty: str | None, exclude: bool) -> tuple:
    return tuple(generate_problems(spec, sys.maxsize, difficulty=difficulty, path=path, exclude_uncertain=exclude))
