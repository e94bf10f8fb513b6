"""core/backoff.py: the wait between attempts whose count we keep (extraction jobs)."""

from core.backoff import backoff


def test_it_grows_fourfold_up_to_the_cap_with_jitter_below_one_base():
    for attempt, delay in ((0, 5), (1, 5), (2, 20), (3, 80), (4, 300), (9, 300)):
        wait = backoff(attempt, base=5, cap=300, salt=7)
        assert delay <= wait < delay + 5, (attempt, wait)
    assert backoff(3, base=0, cap=300, salt=7) == 0.0  # no base, no wait


def test_a_salt_fixes_the_jitter_and_spreads_work_that_failed_together():
    assert backoff(2, base=5, cap=300, salt=41) == backoff(2, base=5, cap=300, salt=41)
    waits = [backoff(2, base=5, cap=300, salt=job_id) for job_id in range(1, 101)]
    assert len(set(waits)) == 100
    assert min(waits) < 21 and max(waits) > 24  # spread across the jitter, not bunched
    unsalted = {backoff(2, base=5, cap=300) for _ in range(20)}
    assert len(unsalted) > 1 and all(20 <= w < 25 for w in unsalted)
