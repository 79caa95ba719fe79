"""Bounded work: hostile expressions answer `unknown` or `error` with a reason, never hang or blow up.

The hostile set runs in a child process with a generous wall-clock limit, so a regression that
hangs fails this test instead of the suite (no timing threshold is asserted)."""

import json
import subprocess
import sys

HOSTILE = [
    ("10**10**10", "unknown"), ("9**9**9**9", "unknown"), ("1" * 5000, "unknown"),
    ("(" * 2000 + "1" + ")" * 2000, "unknown"), ("(" * 500 + "1" + ")" * 500, "unknown"),
    ("2**100000", "unknown"), ("(2**4000)**4000", "unknown"), ("10**400 * 10**400 * 10**400", None),
    ("exp(exp(exp(10)))", "unknown"), ("1e999", "unknown"), ("1" * 101, "unknown"), ("x**99999999", "unknown"),
    ("(x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x)",
     "unknown"),
    ("*".join(["99999999999999999999"] * 90), None), ("factorial(1000)", "error"),
    ("+".join(["1/" + str(p) for p in range(2, 300)]), None), ("-" * 1500 + "1", "unknown"),
    ("sqrt(" * 150 + "2" + ")" * 150, "unknown"), ("max(" + ",".join(["1"] * 100) + ")", "error"),
    ("10**10**10 - 10**10**10", "unknown"), ("0.5**100000", None), ("round(1e300, 20)", None),
    ("*".join(str(k) for k in range(1, 480)), None),  # 479! exactly: a factorial-like chain within the length
    ("(" * 40 + "2" + "**2)" * 40, "unknown"),  # repeated squaring: 2**(2**40)
    ("x" + "*x" * 64, "unknown"), ("sqrt(" * 40 + "x" + ")" * 40, "unknown"),
]

SCRIPT = r"""
import json, sys
from prosfi.quant import check_quantity
cases = json.load(sys.stdin)
out = []
for expr in cases:
    v = check_quantity({"x": "2 m"}, expr=expr, claim="1")
    out.append([v.status.value, v.detail])
print(json.dumps(out))
"""


def test_hostile_expressions_answer_with_a_reason():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], input=json.dumps([e for e, _ in HOSTILE]),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answers = json.loads(proc.stdout)
    for (expr, want), (got, detail) in zip(HOSTILE, answers):
        assert got in ("unknown", "error", "invalid"), (expr[:40], got)
        assert detail and len(detail) < 400, expr[:40]
        if want is not None:
            assert got == want, (expr[:40], got, detail)


def test_bounded_literals_in_claims_and_quantities():
    from prosfi.quant import check_quantity

    assert check_quantity({"x": "1" * 5000}, expr="x", claim="1").status.value == "unknown"
    assert check_quantity({}, expr="1", claim="1" * 5000).status.value == "unknown"
    assert check_quantity({}, expr="1", claim="1e100000").status.value == "unknown"
    assert check_quantity({"x": "1 m**99999"}, expr="x", claim="1").status.value in ("unknown", "error")
