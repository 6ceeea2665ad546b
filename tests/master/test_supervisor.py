"""The master's supervision rules, driven by task.Clock and a spawner that records
what it was asked to do instead of starting processes."""

from __future__ import annotations

import pytest
from twisted.internet.defer import succeed
from twisted.internet.task import Clock

from daemoncore.master.backoff import BackoffPolicy
from daemoncore.master.supervisor import DaemonStartError, Supervisor, describe_exit


class FakeProcess:
    def __init__(self, pid):
        self.pid = pid
        self.signals = []

    def signal(self, name):
        self.signals.append(name)


class FakeSpawner:
    """Starts numbered fake processes; a daemon answers once ``answering`` names it."""

    def __init__(self):
        self.spawned = []  # (name, port, collector, process)
        self.answering = {}
        self._next_pid = 100

    def spawn(self, name, port, collector):
        self._next_pid += 1
        process = FakeProcess(self._next_pid)
        self.spawned.append((name, port, collector, process))
        return process

    def probe(self, name):
        return succeed(self.answering.get(name))

    def latest(self, name):
        return [entry for entry in self.spawned if entry[0] == name][-1]


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def spawner():
    return FakeSpawner()


def make(spawner, clock, names=("COLLECTOR", "SCHEDD"), **kwargs):
    said = []
    supervisor = Supervisor(list(names), spawner, clock, BackoffPolicy(constant=9, factor=2, ceiling=60,
                                                                       recover_after=300),
                            poll_interval=0.1, ready_timeout=5, stop_timeout=3, say=said.append, **kwargs)
    return supervisor, said


def fired(deferred):
    results = []
    deferred.addBoth(results.append)
    return results


def test_daemons_start_in_order_each_after_the_one_before_answers(clock, spawner):
    """The second daemon is spawned only once the collector answers, and is told its address."""
    supervisor, _ = make(spawner, clock)
    started = fired(supervisor.start())
    assert [entry[0] for entry in spawner.spawned] == ["COLLECTOR"]
    clock.advance(0.5)
    assert len(spawner.spawned) == 1
    spawner.answering["COLLECTOR"] = "127.0.0.1:9618"
    clock.advance(0.1)
    assert spawner.latest("SCHEDD")[2] == "127.0.0.1:9618"
    assert started == []
    spawner.answering["SCHEDD"] = "127.0.0.1:4000"
    clock.advance(0.1)
    assert started == [{"COLLECTOR": "127.0.0.1:9618", "SCHEDD": "127.0.0.1:4000"}]


def test_a_dead_daemon_is_restarted_after_the_backoff_on_its_old_port(clock, spawner):
    """A daemon killed by a signal is respawned constant + factor**0 seconds later, on the same port."""
    supervisor, said = make(spawner, clock, names=["COLLECTOR"])
    spawner.answering["COLLECTOR"] = "127.0.0.1:9618"
    fired(supervisor.start())
    first = spawner.latest("COLLECTOR")[3]
    clock.advance(20)
    supervisor.exited("COLLECTOR", first.pid, describe_exit(None, 9))
    assert "was killed by SIGKILL" in said[-1] and "restarting it in 10s" in said[-1]
    clock.advance(9.9)
    assert len(spawner.spawned) == 1
    clock.advance(0.1)
    assert len(spawner.spawned) == 2
    assert spawner.latest("COLLECTOR")[1] == 9618
    assert supervisor.children["COLLECTOR"].restarts == 1


def test_backoff_grows_with_each_quick_death_and_is_capped(clock, spawner):
    """Deaths in quick succession wait 10, 11, 13, 17 ... seconds, never above the ceiling."""
    supervisor, said = make(spawner, clock, names=["COLLECTOR"])
    fired(supervisor.start())
    waits = []
    for _ in range(8):
        process = spawner.latest("COLLECTOR")[3]
        supervisor.exited("COLLECTOR", process.pid, "exited with status 1")
        waits.append(said[-1].split("restarting it in ")[1].split("s")[0])
        clock.advance(100)
    assert waits == ["10", "11", "13", "17", "25", "41", "60", "60"]


def test_a_daemon_that_ran_long_enough_is_forgiven(clock, spawner):
    """After running past the recovery time, the next death waits the shortest backoff again."""
    supervisor, said = make(spawner, clock, names=["COLLECTOR"])
    fired(supervisor.start())
    for _ in range(3):
        supervisor.exited("COLLECTOR", spawner.latest("COLLECTOR")[3].pid, "exited with status 1")
        clock.advance(100)
    clock.advance(400)
    supervisor.exited("COLLECTOR", spawner.latest("COLLECTOR")[3].pid, "exited with status 1")
    assert "restarting it in 10s" in said[-1]
    assert supervisor.children["COLLECTOR"].restarts == 1


def test_an_exit_of_an_old_pid_is_ignored(clock, spawner):
    """A late report about a process already replaced changes nothing."""
    supervisor, _ = make(spawner, clock, names=["COLLECTOR"])
    fired(supervisor.start())
    supervisor.exited("COLLECTOR", 1, "exited with status 0")
    assert supervisor.children["COLLECTOR"].state == "starting"
    assert clock.getDelayedCalls()


def test_a_daemon_that_never_answers_is_killed_and_start_fails(clock, spawner):
    """Past the ready timeout the silent daemon gets SIGKILL and start() fails naming it."""
    supervisor, said = make(spawner, clock, names=["COLLECTOR"])
    started = fired(supervisor.start())
    clock.pump([0.1] * 51)
    assert spawner.latest("COLLECTOR")[3].signals == ["KILL"]
    assert "did not answer within 5s" in said[-1]
    assert len(started) == 1 and started[0].check(DaemonStartError)
    assert "COLLECTOR" in started[0].getErrorMessage()


def test_stop_terms_every_daemon_and_fires_when_all_exited(clock, spawner):
    """stop() sends SIGTERM to each daemon, cancels pending restarts and fires on the last exit."""
    supervisor, _ = make(spawner, clock)
    spawner.answering.update({"COLLECTOR": "127.0.0.1:1", "SCHEDD": "127.0.0.1:2"})
    fired(supervisor.start())
    collector, schedd = spawner.latest("COLLECTOR")[3], spawner.latest("SCHEDD")[3]
    stopped = fired(supervisor.stop())
    assert collector.signals == ["TERM"] and schedd.signals == ["TERM"]
    supervisor.exited("SCHEDD", schedd.pid, "exited with status 0")
    assert stopped == []
    supervisor.exited("COLLECTOR", collector.pid, "exited with status 0")
    assert stopped == [None]
    assert len(spawner.spawned) == 2
    assert clock.getDelayedCalls() == []


def test_stop_kills_a_daemon_that_ignores_sigterm(clock, spawner):
    """A daemon still running after the stop timeout gets SIGKILL."""
    supervisor, _ = make(spawner, clock, names=["COLLECTOR"])
    spawner.answering["COLLECTOR"] = "127.0.0.1:1"
    fired(supervisor.start())
    process = spawner.latest("COLLECTOR")[3]
    stopped = fired(supervisor.stop())
    clock.advance(2.9)
    assert process.signals == ["TERM"]
    clock.advance(0.1)
    assert process.signals == ["TERM", "KILL"]
    supervisor.exited("COLLECTOR", process.pid, describe_exit(None, 9))
    assert stopped == [None]
    assert clock.getDelayedCalls() == []


def test_stop_during_backoff_cancels_the_restart(clock, spawner):
    """A daemon waiting to be restarted is not restarted once the pool stops."""
    supervisor, _ = make(spawner, clock, names=["COLLECTOR"])
    fired(supervisor.start())
    supervisor.exited("COLLECTOR", spawner.latest("COLLECTOR")[3].pid, "exited with status 1")
    stopped = fired(supervisor.stop())
    assert stopped == [None]
    clock.advance(100)
    assert len(spawner.spawned) == 1
    assert clock.getDelayedCalls() == []


def test_describe_lists_state_pid_and_address(clock, spawner):
    """describe() reports each daemon's state, pid, address and restart count."""
    supervisor, _ = make(spawner, clock, names=["COLLECTOR"])
    spawner.answering["COLLECTOR"] = "127.0.0.1:9618"
    fired(supervisor.start())
    [row] = supervisor.describe()
    assert row["name"] == "COLLECTOR" and row["state"] == "ready"
    assert row["pid"] == spawner.latest("COLLECTOR")[3].pid and row["address"] == "127.0.0.1:9618"
    assert row["restarts"] == 0


def test_exit_descriptions_name_the_signal_or_status():
    """Exit reasons read as a person would say them."""
    assert describe_exit(3, None) == "exited with status 3"
    assert describe_exit(None, 15) == "was killed by SIGTERM"
    assert describe_exit(None, 200) == "was killed by signal 200"
