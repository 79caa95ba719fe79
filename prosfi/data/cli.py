"""`prosfi data`: generate or load problems, write gold traces and TRL prompt rows.

    prosfi data kk --people 3 --count 100 --seed 0 -o kk3.jsonl
    prosfi data kk --hub --people 3 -o kk3_test.jsonl          (K-and-K/knights-and-knaves)
    prosfi data fol --difficulty hard --count 300 --seed 0 -o hard.jsonl
    prosfi data toy --depth 1 --layout fixed --count 200 --seed 5 -o toy.jsonl   (the CPU demo's rule chains)
    prosfi data proverqa --split hard -o pqa_hard.jsonl           (opendatalab/ProverQA)
    prosfi data gsm8k --file test.jsonl -o gsm8k_test.jsonl       (GSM8K's public JSONL)
    prosfi data physics --difficulty easy --count 100 --seed 0 -o phys.jsonl
    prosfi data gsm_symbolic --count 100 --seed 0 -o gsms.jsonl   (reasoning-gym templates)
    prosfi data scibench --file atkins.json -o sb.jsonl           (SciBench's public JSON)
    prosfi data gold problems.jsonl -o gold.jsonl [--sft]
    prosfi data prompts problems.jsonl -o rows.jsonl [--few-shot 1]
    prosfi data validate problems.jsonl
Generators are deterministic: the same arguments and seed write the same bytes. The source commands (kk ... scibench)
are the sources registered in `prosfi.data.sources`, their flags the fields of each source's settings dataclass;
`proverqa_gen` and `proverqa_hub` are the aliases of `fol` and `proverqa`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterable, Iterator

from prosfi.data.problem import Problem, read_problems, write_problems


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from prosfi.data import sources

    loaders = sources.names("data")
    sub = parser.add_subparsers(dest="data_command", required=True,
                                metavar="{" + ",".join((*loaders, "gold", "prompts", "validate")) + "}")
    for name in loaders:  # one subcommand per registered source, its flags from the source's settings dataclass
        source = sources.SOURCES[name]
        p = sub.add_parser(name, aliases=list(source.aliases), help=source.help)
        add_settings(p, source.settings)
        p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("gold", help="gold completions ({problem_id, completion}) or SFT rows (--sft)")
    p.add_argument("problems", help="problems JSONL")
    p.add_argument("--sft", action="store_true", help="write SFT rows (prompt + completion messages)")
    p.add_argument("--few-shot", type=int, default=0, help="worked examples in SFT prompts")
    p.add_argument("--no-verify", action="store_true", help="do not re-check every step with the verifier")
    p.add_argument("--backends", default="z3", help="verifier backends for the step check")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("prompts", help="TRL rows: prompt messages plus the problem column for rewards")
    p.add_argument("problems", help="problems JSONL")
    p.add_argument("--few-shot", type=int, default=0, help="worked examples before each problem")
    p.add_argument("--system-prompt-file", help="replace the built-in system prompt with this file's text")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("validate", help="check a problems file: formulas parse, ids unique, answers fit")
    p.add_argument("problems", help="problems JSONL")


def add_settings(parser: argparse.ArgumentParser, settings: type) -> None:
    """A flag per field of a source's settings dataclass: `--field-name` with the field's type, default and
    `help` (`choices`, `required` from its metadata); a bool defaulting to False is `--name`, one defaulting to
    True is `--no-name` (its help the metadata's `off`)."""
    from prosfi.data.sources import settings_fields

    for name, tp, default, meta in settings_fields(settings):
        flag = "--" + name.replace("_", "-")
        if tp is bool:
            parser.add_argument(f"--no-{name.replace('_', '-')}" if default else flag, dest=name,
                                action="store_false" if default else "store_true",
                                help=meta.get("off" if default else "help"))
            continue
        extra = {"choices": meta["choices"]} if "choices" in meta else {}
        if meta.get("required"):
            extra["required"] = True
        else:
            extra["default"] = default
        parser.add_argument(flag, type=tp, help=meta.get("help"), **extra)


@contextlib.contextmanager
def _out(path: str) -> Iterator:
    if path == "-":
        yield sys.stdout
    else:
        with open(path, "w", encoding="utf-8") as fh:
            yield fh


def _write(problems: Iterable[Problem], path: str) -> int:
    if path != "-":
        return write_problems(problems, path)
    n = 0
    for p in problems:
        sys.stdout.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")
        n += 1
    return n


def _write_rows(rows: Iterable[dict], path: str) -> int:
    n = 0
    with _out(path) as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            n += 1
    return n


def _verifier(backends: str):
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.verifier import Verifier

    return Verifier(VerifierConfig(backends=backends))


def _say(msg: str) -> None:
    print(msg, file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    import os

    from prosfi.usage import UsageError

    bad = number_errors(args)
    if bad is not None:
        raise UsageError(bad)
    output = getattr(args, "output", None)
    if output and output != "-":  # before minutes of work, not after
        folder = os.path.dirname(output) or "."
        if not os.path.isdir(folder):
            raise UsageError(f"cannot write {output}: no folder {folder} (create it first)")
    try:
        command = _COMMANDS.get(args.data_command)
        return command(args) if command else _source_command(args)
    except UsageError:
        raise
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except BrokenPipeError:  # `prosfi data kk -o - | head`: prosfi.cli exits quietly
        raise
    except OSError as exc:  # a missing input, an output folder that does not exist: say which
        what = f"{exc.strerror}: {exc.filename}" if exc.filename else str(exc)
        hint = " (check the path)" if isinstance(exc, FileNotFoundError) else ""
        raise UsageError(f"{what}{hint}") from None


def _source_command(args: argparse.Namespace) -> int:
    """`prosfi data NAME`: the registered source's settings from the flags, its problems written."""
    from prosfi.data import sources
    from prosfi.data.gsm_symbolic import GymUnavailable
    from prosfi.data.hub import HubUnavailable
    from prosfi.domains import domain_for

    source = sources.get(args.data_command, "data")
    for kind in source.kinds:  # gold chains are built under their domain's rules
        domain_for(kind)
    settings = source.settings(**{name: getattr(args, name) for name, *_ in sources.settings_fields(source.settings)})
    try:
        loaded = source.write(settings)
    except (HubUnavailable, GymUnavailable) as exc:
        _say(str(exc))
        return 1
    for note in loaded.notes:
        _say(note)
    if loaded.refusal:
        _say(loaded.refusal)
        return 1
    n = _write(loaded.problems, args.output)
    _say(f"wrote {n} {loaded.what or source.name + ' problems'} to {args.output}{loaded.tail}")
    for index, reason in loaded.skipped[:10]:
        _say(f"skipped record {index}: {reason}")
    if loaded.skipped:
        family = loaded.what[: -len(" problems")] + " " if loaded.what.endswith(" problems") else ""
        _say(f"skipped {len(loaded.skipped)} {family}record(s) that could not be converted")
    return 0


def number_errors(args: argparse.Namespace) -> str | None:
    """The one-line refusal of a count that cannot be meant (`--count -5`, `--few-shot -2`, `--limit 0`)."""
    for dest, least in (("count", 1), ("limit", 1), ("few_shot", 0), ("people", 2)):
        value = getattr(args, dest, None)
        if isinstance(value, int) and value < least:
            flag = "--" + dest.replace("_", "-")
            return f"{flag} must be at least {least}, got {value}"
    return None


def _gold(args) -> int:
    from prosfi.domains import domain_for
    from prosfi.domains.prompts import to_sft_row

    problems = list(read_problems(args.problems))
    found: list[tuple[Problem, str]] = []
    missing: list[str] = []
    skipped: list[tuple[str, str]] = []  # (problem id, why): a failure or a trace below the top reward
    ctx = contextlib.nullcontext(None) if args.no_verify else _verifier(args.backends)
    with ctx as verifier:
        for p in problems:
            try:
                text = domain_for(p).gold_completion(p, verifier)
            except Exception as exc:  # noqa: BLE001 - one bad problem never costs the others
                skipped.append((p.id, f"gold search failed: {exc!r}"[:200]))
                continue
            if text is None:
                missing.append(p.id)
            else:
                found.append((p, text))
        if verifier is not None and found:  # every trace written earns the top reward, or is not written
            from prosfi.rewards.config import RewardConfig
            from prosfi.rewards.score import score_batch

            top = RewardConfig().right_verified
            results = score_batch([p for p, _ in found], [t for _, t in found], verifier)
            kept = []
            for (p, text), r in zip(found, results):
                if r.reward == top:
                    kept.append((p, text))
                else:
                    skipped.append((p.id, f"gold trace scores {r.reward}: {r.reason}"[:200]))
            found = kept
    rows = [{"problem_id": p.id, **to_sft_row(p, text, few_shot=args.few_shot)} if args.sft
            else {"problem_id": p.id, "completion": text} for p, text in found]
    n = _write_rows(rows, args.output)
    total = len(problems)
    share = f" ({100 * n / total:.0f}%)" if total else ""
    _say(f"wrote {n} gold {'SFT rows' if args.sft else 'completions'} for {n} of {total} problems{share} "
         f"to {args.output}")
    if missing:
        _say(f"no gold trace for {len(missing)} problem(s) (no known derivation): {', '.join(missing[:10])}")
    for pid, why in skipped[:10]:
        _say(f"skipped {pid}: {why}")
    if skipped:
        _say(f"skipped {len(skipped)} problem(s) (reasons above)")
    return 0


def _prompts(args) -> int:
    from prosfi.domains.prompts import prompt_rows

    system = None  # each problem's domain prompt
    if args.system_prompt_file:
        with open(args.system_prompt_file, encoding="utf-8") as fh:
            system = fh.read().strip()
    rows = prompt_rows(read_problems(args.problems), system, args.few_shot)
    n = _write_rows(rows, args.output)
    _say(f"wrote {n} prompt rows to {args.output}")
    return 0


def _validate(args) -> int:
    n = sum(1 for _ in read_problems(args.problems, validate=True))
    _say(f"{args.problems}: {n} problems, all valid")
    return 0


_COMMANDS = {"gold": _gold, "prompts": _prompts, "validate": _validate}  # the rest are the registry's sources
