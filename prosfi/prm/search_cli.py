"""`prosfi search`: verifier-first beam search with a PRM, measured by the eval code.

    prosfi search --data fol:easy --count 20 --model runs/demo --prm runs/prm/pairwise --beams 4 --candidates 4 -o runs/search
    prosfi search ... --ablations      # the same problems under both, prm (no verifier filter), verifier (no PRM)

Writes OUT/search.jsonl (per problem: answer, verified chain, calls, time, and the eval record),
OUT/summary.json (eval metrics and the cost model per mode) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from prosfi import jsonl
from prosfi.configflags import Flags
from prosfi.prm.search import MODES, SearchConfig

# SearchConfig's flags (prosfi.configflags); the step sampling and token limits are the proposer's own.
SEARCH_FLAGS = Flags(SearchConfig, ("beams", "candidates", "max_steps", "mode", "retries", "seed"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from prosfi.eval.cli import add_source_arguments
    from prosfi.verify.cli import add_verifier_arguments

    add_source_arguments(parser, required=True)
    parser.add_argument("--model", required=True, help="the policy: a checkpoint folder or hub id (transformers)")
    parser.add_argument("--prm", default=None, help="a trained PRM folder (either objective); not needed for "
                        "--mode verifier")
    parser.add_argument("--recipe", default=None, help="a training recipe whose prompt settings build the prompts")
    SEARCH_FLAGS.add(parser)
    parser.add_argument("--ablations", action="store_true", help="run every mode on the same problems")
    parser.add_argument("--temperature", type=float, default=0.7, help="step sampling temperature (default: %(default)s)")
    parser.add_argument("--top-p", type=float, default=0.95, help="nucleus sampling of steps (default: %(default)s)")
    parser.add_argument("--max-step-tokens", type=int, default=128, help="token limit of one step object")
    parser.add_argument("--max-think-tokens", type=int, default=256,
                        help="token limit of the think block the policy writes first (per problem)")
    parser.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
    parser.add_argument("-o", "--output", default="runs/search", help="output folder (default: %(default)s)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the intervals")
    from prosfi.usage import add_overwrite_argument

    add_overwrite_argument(parser)
    add_verifier_arguments(parser, defaults={"timeout_ms": 50})  # NS-PRM's verifier budget per call


def _params(prm) -> int | None:
    model = getattr(prm, "model", None)
    return sum(p.numel() for p in model.parameters()) if model is not None and hasattr(model, "parameters") else None


def run_modes(problems, proposer, prm, verifier, modes, config_kwargs: dict[str, Any], n_boot: int = 1000,
              reseed=None) -> dict[str, dict[str, Any]]:
    """{mode: {"results": [SearchResult], "records": [eval record], "metrics": ..., "cost": ...}}."""
    from prosfi.eval.generate import Generation
    from prosfi.eval.metrics import metrics
    from prosfi.eval.scoring import score_generations
    from prosfi.prm.search import SearchConfig, cost_report, search

    out = {}
    for mode in modes:
        cfg = SearchConfig(mode=mode, **config_kwargs)
        if reseed is not None:
            reseed(cfg.seed)
        results = [search(p, proposer, prm, verifier, cfg) for p in problems]
        records = score_generations(problems, [Generation(r.problem_id, 0, r.completion) for r in results], verifier)
        out[mode] = {"results": results, "records": records, "metrics": metrics(records, n_boot=n_boot), "cfg": cfg}
    # one C_PRM for the run: pooled over the modes that called the PRM (verifier-only makes no call)
    calls = sum(r.prm_calls for d in out.values() for r in d["results"])
    c_prm = sum(r.prm_s for d in out.values() for r in d["results"]) / calls if calls else None
    for d in out.values():
        d["cost"] = cost_report(d["results"], d.pop("cfg"), c_prm=c_prm, prm_params=_params(prm))
    return out


def table(by_mode: dict[str, dict[str, Any]]) -> str:
    head = ("| mode | problems | accuracy % | reward hit % | PRM calls | unpruned PRM calls | verifier calls | "
            "C_V ms | C_PRM ms | iso-cost beams (unpruned) | s/problem |")
    lines = [head, "|---|" + "---|" * 10]
    for mode, d in by_mode.items():
        m, c = d["metrics"], d["cost"]
        secs = sum(r.total_s for r in d["results"]) / max(1, len(d["results"]))

        def pct(v):
            return "–" if v is None else f"{100 * v:.1f}"

        lines.append(f"| {mode} | {m['n_problems']} | {pct(m['accuracy'])} | {pct(m['reward_hit'])} | "
                     f"{c['prm_calls']} | {c['unpruned_prm_calls']} | {c['verifier_calls']} | {c['C_V_ms']} | "
                     f"{c['C_PRM_ms']} | {c.get('iso_beams_unpruned', '–')} | {secs:.2f} |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from prosfi.prm.cli import guarded

    return guarded("prosfi search", _run, args)


def _check_flags(args: argparse.Namespace, modes: list[str]) -> None:
    """Usage errors before any model is loaded."""
    from prosfi.usage import check_model_path

    for flag in ("beams", "candidates", "max_steps", "max_step_tokens", "max_think_tokens", "bootstrap"):
        if getattr(args, flag) < 1:
            raise ValueError(f"--{flag.replace('_', '-')} {getattr(args, flag)}: give at least 1")
    if args.retries < 0:
        raise ValueError(f"--retries {args.retries}: give 0 or more")
    if not 0 < args.top_p <= 1:
        raise ValueError(f"--top-p {args.top_p}: give a value in (0, 1]")
    if not args.temperature > 0:
        raise ValueError(f"--temperature {args.temperature}: step sampling needs a temperature > 0")
    check_model_path(args.model)
    if any(m != "verifier" for m in modes):
        if not args.prm:
            raise ValueError("--prm DIR is needed for modes both and prm (or use --mode verifier)")
        from prosfi.prm.model import read_marker

        if not Path(args.prm).is_dir():
            raise ValueError(f"--prm {args.prm}: no such folder; give a `prosfi prm train` output folder")
        read_marker(args.prm)
    if args.recipe and not Path(args.recipe).is_file():
        raise ValueError(f"--recipe {args.recipe}: no such file")


def _run(args: argparse.Namespace) -> int:
    modes = list(MODES) if args.ablations else [args.mode]
    _check_flags(args, modes)  # before torch and transformers are even imported

    from prosfi.eval.cli import prompt_settings, sources_from_args
    from prosfi.usage import output_folder
    from prosfi.verify.cli import verifier_config
    from prosfi.verify.verifier import Verifier

    output_folder(args.output, create=False, overwrite=args.overwrite)  # before any work
    settings = prompt_settings(args.recipe)
    with Verifier(verifier_config(args)) as verifier:
        sources = sources_from_args(args, verifier=verifier)
        problems = [p for s in sources for p in s.problems]
        if not problems:
            from prosfi.eval.cli import no_problems

            raise ValueError(no_problems(sources))
        out = output_folder(args.output, overwrite=True)  # checked above; created after the problems: a bad spec leaves no folder behind
        from transformers import set_seed

        from prosfi.eval.generate import load_hf
        from prosfi.prm.search import HFProposer

        prm = None
        if any(m != "verifier" for m in modes):
            from prosfi.prm.model import load_prm

            prm = load_prm(args.prm, device=args.device)
        model, tokenizer = load_hf(args.model, args.device)
        proposer = HFProposer(model, tokenizer, settings, temperature=args.temperature, top_p=args.top_p,
                              max_step_tokens=args.max_step_tokens, max_think_tokens=args.max_think_tokens,
                              seed=args.seed)
        by_mode = run_modes(problems, proposer, prm, verifier, modes,
                            {k: v for k, v in SEARCH_FLAGS.kwargs(args).items() if k != "mode"},
                            n_boot=args.bootstrap, reseed=set_seed)
    with open(out / "search.jsonl", "w", encoding="utf-8") as fh:
        for mode, d in by_mode.items():
            fh.writelines(jsonl.dumps({"mode": mode, **r.to_json(), "eval": {k: rec.get(k) for k in (
                    "answer_correct", "chain_valid", "reward", "format_ok", "steps")}}) + "\n" for r, rec in zip(d["results"], d["records"]))
    summary = {mode: {"metrics": d["metrics"], "cost": d["cost"]} for mode, d in by_mode.items()}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    text = table(by_mode)
    (out / "summary.md").write_text(text + "\n")
    print(text)
    print(f"[prosfi search] wrote {out}/search.jsonl, summary.json, summary.md", file=sys.stderr)
    return 0


__all__ = ["add_arguments", "run", "run_modes", "table"]
