from __future__ import annotations

from reconcile.cluster.ratelimit import TokenBucket


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_burst_then_qps() -> None:
    t = FakeTime()
    bucket = TokenBucket(qps=10, burst=3, clock=t.clock, sleep=t.sleep)
    for _ in range(3):
        assert bucket.acquire() == 0.0
    waits = [bucket.acquire() for _ in range(5)]
    assert all(abs(w - 0.1) < 1e-9 for w in waits)
    assert abs(t.now - 0.5) < 1e-9  # 5 requests past the burst at 10 per second


def test_idle_time_refills_up_to_the_burst() -> None:
    t = FakeTime()
    bucket = TokenBucket(qps=1, burst=2, clock=t.clock, sleep=t.sleep)
    bucket.acquire()
    bucket.acquire()
    t.now += 100
    assert bucket.acquire() == 0.0
    assert bucket.acquire() == 0.0
    assert bucket.acquire() > 0.0


def test_zero_qps_disables_the_limit() -> None:
    t = FakeTime()
    bucket = TokenBucket(qps=0, burst=1, clock=t.clock, sleep=t.sleep)
    assert all(bucket.acquire() == 0.0 for _ in range(1000))
    assert t.slept == []
