"""The one retry policy of the eval endpoint client and the serve client (prosfi.retry.Backoff)."""

from __future__ import annotations

import inspect

import pytest

from prosfi.retry import Backoff


def test_waits_double_from_the_first_up_to_the_cap_with_jitter_below_it():
    """Half to all of the capped doubling delay: clients that failed together spread out, none waits past max_s."""
    policy = Backoff(retries=6, first_s=1.0, max_s=10.0)
    assert [policy.delay(k, rand=lambda: 0.0) for k in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert [policy.delay(k, rand=lambda: 0.999) for k in (1, 4, 6)] == pytest.approx([0.9995, 7.996, 9.995])
    tries = list(policy.attempts())
    assert [a for a, _ in tries] == list(range(7)) and tries[0][1] == 0.0  # the first try does not wait
    assert all(0.5 * min(10.0, 2 ** (a - 1)) <= w < min(10.0, 2 ** (a - 1)) for a, w in tries[1:])


def test_no_retries_is_one_try():
    assert list(Backoff(retries=0).attempts()) == [(0, 0.0)]
    assert list(Backoff(retries=-1).attempts()) == [(0, 0.0)]


def test_both_http_callers_wait_through_it():
    """The endpoint client and the serve client share the policy instead of two back-off loops."""
    from prosfi.eval import endpoint
    from prosfi.serve import client

    for source in (inspect.getsource(endpoint._post_with_retries), inspect.getsource(client.ProsfiClient.post)):
        assert "Backoff(" in source and "random" not in source
