"""GPU shares on personal pools with simulated cards, end to end: the negotiator places
shares per card (as the startd then carves them), so a card really is shared; binpack
and spread order the cards; a pinned share that cannot fit waits without looping; the
split count caps shares per card."""

from __future__ import annotations

import itertools

import pytest

from tests.integration.conftest import personal_pool, roost

pytestmark = pytest.mark.integration

#: Each job prints its card and its start time (seconds), sleeps, then prints its end
#: time and its memory limit.
TIMED_SCRIPT = """#!/bin/sh
echo "$CUDA_VISIBLE_DEVICES $(date +%s.%N)"
sleep "$1"
echo "$(date +%s.%N) ${CUDA_DEVICE_MEMORY_LIMIT_0:-none}"
"""
TIMED = """executable = timed.sh
arguments = {seconds}
output = {name}.$(Process).out
request_cpus = 1
request_memory = 32M
request_gpu_memory = {memory}
{extra}
queue {count}
"""


def run(pool, name, count, memory="10000", seconds=3, extra="", timeout=90):
    """Submit ``count`` timed share jobs and wait for them; each job's (card, start, end, limit)."""
    work = pool["home"] / "work"
    work.mkdir(exist_ok=True)
    (work / "timed.sh").write_text(TIMED_SCRIPT)
    (work / "timed.sh").chmod(0o755)
    sub = work / f"{name}.sub"
    sub.write_text(TIMED.format(name=name, count=count, memory=memory, seconds=seconds, extra=extra))
    done = roost(pool["env"], "run", str(sub), "--timeout", str(timeout), timeout=timeout + 30)
    assert f"{count} of {count} job(s) succeeded" in done.stdout, done.stdout + done.stderr
    out = []
    for proc in range(count):
        first, second = (work / f"{name}.{proc}.out").read_text().splitlines()
        card, start = first.split()
        end, limit = second.split()
        out.append((card, float(start), float(end), limit))
    return out


def most_at_once(runs) -> int:
    """The largest number of runs whose intervals overlap at one moment."""
    moments = sorted(itertools.chain(((start, 1) for _, start, _, _ in runs), ((end, -1) for _, _, end, _ in runs)),
                     key=lambda m: (m[0], m[1]))
    best = now = 0
    for _, step in moments:
        now += step
        best = max(best, now)
    return best


@pytest.fixture(scope="module")
def one_card(tmp_path_factory):
    with personal_pool(tmp_path_factory.mktemp("home"), {"_ROOST_GPU_DISCOVERY": "simulated:1xA100:40G",
                                                         "_ROOST_NUM_CPUS": "8"}) as running:
        yield running


@pytest.fixture(scope="module")
def two_cards(tmp_path_factory):
    with personal_pool(tmp_path_factory.mktemp("home"), {"_ROOST_GPU_DISCOVERY": "simulated:2xA100:40G",
                                                         "_ROOST_NUM_CPUS": "8"}) as running:
        yield running


def test_one_40g_card_runs_four_10000_mib_shares_at_once_and_a_fifth_after(one_card):
    runs = run(one_card, "four", 5, seconds=4)
    assert most_at_once(runs) == 4
    starts = sorted(runs, key=lambda r: r[1])
    assert starts[4][1] >= min(end for _, _, end, _ in starts[:4])
    assert {limit for *_, limit in runs} == {"10000m"}


def test_a_pinned_share_that_cannot_fit_waits_and_says_why(one_card):
    work = one_card["home"] / "work"
    work.mkdir(exist_ok=True)
    sub = work / "pinned.sub"
    sub.write_text("executable = /bin/sleep\narguments = 30\nrequest_memory = 32M\n"
                   "request_gpu_memory = 30000\nuse_gpu_uuids = 0\nqueue 2\n")
    roost(one_card["env"], "submit", str(sub))
    try:
        import time
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            states = roost(one_card["env"], "q", "-af", "JobStatus").stdout.split()
            if sorted(states) == ["1", "2"]:
                break
            time.sleep(0.5)
        assert sorted(states) == ["1", "2"]
        time.sleep(6)  # several negotiation cycles: the idle one must not be matched and refused
        assert sorted(roost(one_card["env"], "q", "-af", "JobStatus").stdout.split()) == ["1", "2"]
        idle = roost(one_card["env"], "q", "-af", "ClusterId", "ProcId", "-constraint", "JobStatus == 1").stdout.split()
        analysis = roost(one_card["env"], "q", "-better-analyze", f"{idle[0]}.{idle[1]}").stdout
        assert "memory" in analysis.lower(), analysis
    finally:
        roost(one_card["env"], "rm", "-all", check=False)


def test_binpack_fills_one_card_before_the_next_and_spread_alternates(two_cards):
    packed = run(two_cards, "packed", 4, extra="gpu_placement = binpack", seconds=4)
    assert most_at_once(packed) == 4
    assert len({card for card, *_ in packed}) == 1
    spread = run(two_cards, "spread", 4, extra="gpu_placement = spread", seconds=4)
    assert most_at_once(spread) == 4
    cards = [card for card, *_ in spread]
    assert sorted(cards.count(c) for c in set(cards)) == [2, 2]


def test_eight_shares_fill_both_cards_and_a_whole_card_job_waits_for_an_empty_one(two_cards):
    runs = run(two_cards, "eight", 8, extra="gpu_placement = binpack", seconds=4)
    assert most_at_once(runs) == 8
    cards = [card for card, *_ in runs]
    assert sorted(cards.count(c) for c in set(cards)) == [4, 4]


def test_a_split_count_of_three_keeps_a_fourth_share_off_the_card(tmp_path_factory):
    with personal_pool(tmp_path_factory.mktemp("home"), {"_ROOST_GPU_DISCOVERY": "simulated:1xA100:40G",
                                                         "_ROOST_NUM_CPUS": "8",
                                                         "_ROOST_GPU_SPLIT_COUNT": "3"}) as pool:
        runs = run(pool, "split", 4, memory="1000", seconds=4)
    assert most_at_once(runs) == 3


def test_a_claim_for_a_small_share_never_runs_a_whole_card_or_a_larger_share(one_card):
    work = one_card["home"] / "work"
    work.mkdir(exist_ok=True)
    sub = work / "reuse.sub"
    sub.write_text(
        "executable = /bin/sh\n"
        "arguments = \"-c 'echo limit=$CUDA_DEVICE_MEMORY_LIMIT_0 cards=$CUDA_VISIBLE_DEVICES; sleep 1'\"\n"
        "output = reuse.$(Cluster).$(Process).out\nrequest_memory = 32M\n"
        "request_gpu_memory = 10000\nqueue 1\n"
        "request_gpu_memory = 35000\nqueue 1\n"
        "request_gpu_memory =\nrequest_gpus = 1\nqueue 1\n")
    done = roost(one_card["env"], "run", str(sub), "--timeout", "90", timeout=120)
    assert "3 of 3 job(s) succeeded" in done.stdout, done.stdout + done.stderr
    outputs = {path.name: path.read_text() for path in work.glob("reuse.*.out")}
    limits = sorted(text.split()[0] for text in outputs.values())
    assert limits == ["limit=", "limit=10000m", "limit=35000m"], outputs
