"""A run's last report survives a short outage of the schedd: it is tried again every
tenth of the job's lease (0.5 to 5 s) until the schedd answers, and given up once the
lease is over or the run was killed, on a task.Clock."""

from twisted.internet import defer, task

import classad
from daemoncore.wire.errors import Unreachable
from startd.job_run import Ending, JobRun, RunSettings, retry_delay


class FlakyLink:
    """Reports fail as unreachable ``down`` times, then reach the schedd."""

    def __init__(self, down: int) -> None:
        self.down = down
        self.tries = 0
        self.reports: list[str] = []

    def update(self, event: str, attrs: dict, takes_activation: bool = False):
        self.tries += 1
        if self.tries <= self.down:
            return defer.fail(Unreachable("no answer from the schedd at 198.18.0.2:9618"))
        self.reports.append(event)
        return defer.succeed(None)


def held_run(tmp_path, link, lease=20):
    """A run with no account to run as: it reports ``hold`` at once."""
    clock = task.Clock()
    job = classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Cmd": "/bin/true", "JobLeaseDuration": lease})
    run = JobRun(clock, link, "1.0", job, classad.ClassAd(), RunSettings(execute_dir=str(tmp_path)),
                 run_blocking=None, execute_attrs={"RemoteHost": "slot1@ep"}, run_as="no such account")
    ended = []
    run.run().addCallback(ended.append)
    return clock, run, ended


def test_retry_delay_is_a_tenth_of_the_lease_within_bounds():
    """20 s lease: 2 s; 2400 s: 5 s; 2 s: half a second."""
    assert (retry_delay(20), retry_delay(2400), retry_delay(2)) == (2.0, 5.0, 0.5)


def test_the_final_report_is_sent_once_the_schedd_is_back(tmp_path):
    """Three failures 2 s apart, then the hold report arrives and the run ends held."""
    link = FlakyLink(down=3)
    clock, run, ended = held_run(tmp_path, link)
    assert ended == [] and link.tries == 1
    clock.advance(2)
    clock.advance(2)
    assert ended == []
    clock.advance(2)
    assert ended == [Ending.HELD] and link.reports == ["hold"] and link.tries == 4


def test_the_run_gives_up_when_the_lease_is_over(tmp_path):
    """A schedd gone for longer than the 20 s lease: tries every 2 s, then (after the try at 20 s) the run ends without it."""
    link = FlakyLink(down=1000)
    clock, run, ended = held_run(tmp_path, link)
    clock.pump([2] * 9)
    assert ended == []
    clock.pump([2] * 2)
    assert ended == [Ending.HELD] and link.reports == [] and link.tries == 11
    assert clock.getDelayedCalls() == []


def test_a_killed_run_stops_trying(tmp_path):
    """Once the claim ended here (the run was killed) the report is given up at the next try."""
    link = FlakyLink(down=1000)
    clock, run, ended = held_run(tmp_path, link)
    run.kill("the claim lease of 20 s expired")
    clock.advance(2)
    assert ended == [Ending.HELD] and link.tries == 2
