"""Problems for a training run, from the dataset spec in the script arguments.

One function per source, all returning `Problem`s; the rows TRL sees are built from these in
`prosfi.train.rows`. Generators are seeded, so a recipe names its data exactly.
"""

from __future__ import annotations

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
    from prosfi.data.gsm_symbolic import generate

    return generate(count, seed)


def gsm8k(path: str, count: int) -> list[Problem]:
    """The first `count` usable problems of a GSM8K JSONL file (prosfi.data.gsm8k)."""
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
    """Problems as the script arguments describe them; `seed_offset` draws a disjoint generated set."""
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
