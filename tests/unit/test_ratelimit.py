from __future__ import annotations

from reconcile.cluster.ratelimit import AdaptiveRate, TokenBucket


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


def test_the_default_rate_follows_the_server() -> None:
    t = FakeTime()
    rate = AdaptiveRate(start=50, burst=10, clock=t.clock, sleep=t.sleep)
    for _ in range(50):  # a second of answers the server kept up with: twice as fast
        rate.record(200, 0.01)
    assert rate.qps == 100
    for _ in range(100):
        rate.record(201, 0.01)
    assert rate.qps == 200
    rate.record(429, 0.01)  # APF says the server is busy: half
    assert rate.qps == 100
    rate.record(503, 0.01)  # within a second of the last decrease: once is enough
    assert rate.qps == 100
    t.now += 1.5
    rate.record(200, 3.0)  # a slow answer counts as a busy server
    assert rate.qps == 50
    for _ in range(10):
        t.now += 1.5
        rate.record(429, 0.01)
    assert rate.qps == 5  # the floor
    rate.record(500, 0.01)
    rate.record(0, 0.01)  # errors without an answer say nothing about the pace
    assert rate.qps == 5
    assert rate.peak == 200


def test_the_default_rate_has_a_ceiling() -> None:
    t = FakeTime()
    rate = AdaptiveRate(start=50, burst=10, ceiling=400, clock=t.clock, sleep=t.sleep)
    for _ in range(10_000):
        rate.record(200, 0.001)
    assert rate.qps == 400
