"""Benchmark: the test suite's wall time and where it goes, and the documented commands' wall times (not a test).

docs/benchmarks.md quotes its timings from this script's output; rerun it before quoting a number:

    python bench/bench_suite.py                        # the README's test command (`python -m pytest -q`)
    python bench/bench_suite.py -m "not slow"          # the quick loop; any pytest arguments pass through
    python bench/bench_suite.py tests/test_readme_examples.py -k prm   # one part (the PRM quick start)
    python bench/bench_suite.py --command "prosfi train recipes/demo/cpu_chains.yaml --output_dir /tmp/qs"

It prints: the outcome counts and wall time, the 1-minute load average before and after and the core count
(figures measured on shared cores are not idle-core figures: say which), the time spent in `slow`-marked tests
(what `-m "not slow"` or PROSFI_SKIP_SLOW=1 saves), the slowest test files and the slowest tests.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class _Timings:
    """A pytest plugin: each test's setup + call + teardown time, and whether it is marked slow."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.slow: set[str] = set()
        self.outcomes: dict[str, int] = defaultdict(int)

    def pytest_collection_modifyitems(self, items):
        self.slow = {i.nodeid for i in items if "slow" in i.keywords}

    def pytest_runtest_logreport(self, report):
        self.seconds[report.nodeid] += report.duration
        if "slow" in report.keywords:  # under pytest-xdist the controller collects nothing: read the reports
            self.slow.add(report.nodeid)
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.outcomes[report.outcome] += 1


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "n/a"


def run_suite(pytest_args: list[str], top: int) -> int:
    import pytest

    timings = _Timings()
    load_before, started = _load(), time.perf_counter()
    code = pytest.main(["-q", "-p", "no:cacheprovider", *pytest_args], plugins=[timings])
    wall = time.perf_counter() - started
    counts = ", ".join(f"{n} {k}" for k, n in sorted(timings.outcomes.items()))
    print(f"\nsuite: {counts} in {wall:.0f} s wall ({wall / 60:.1f} min); load average {load_before} -> {_load()} "
          f"on {os.cpu_count()} cores; pytest {' '.join(pytest_args) or '(no arguments)'}")
    slow = sum(s for n, s in timings.seconds.items() if n in timings.slow)
    print(f"slow-marked tests: {len(timings.slow)}, {slow:.0f} s of test time (what -m 'not slow' saves)")
    by_file: dict[str, float] = defaultdict(float)
    for nodeid, seconds in timings.seconds.items():
        by_file[nodeid.split("::")[0]] += seconds
    print(f"slowest files (of {len(by_file)}):")
    for name, seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {seconds:7.1f} s  {name}")
    print("slowest tests:")
    for name, seconds in sorted(timings.seconds.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {seconds:7.1f} s  {name}{'  [slow]' if name in timings.slow else ''}")
    return int(code)


def run_command(command: str) -> int:
    load_before, started = _load(), time.perf_counter()
    proc = subprocess.run(shlex.split(command), check=False, cwd=ROOT)
    wall = time.perf_counter() - started
    print(f"\ncommand: `{command}` exited {proc.returncode} in {wall:.0f} s wall ({wall / 60:.1f} min); "
          f"load average {load_before} -> {_load()} on {os.cpu_count()} cores")
    return proc.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--command", action="append", default=[], help="time this command instead (repeatable)")
    parser.add_argument("--top", type=int, default=12, help="how many slowest files and tests to list")
    args, pytest_args = parser.parse_known_args(argv)
    if args.command:
        return max(run_command(c) for c in args.command)
    return run_suite(pytest_args, args.top)


if __name__ == "__main__":
    sys.exit(main())
