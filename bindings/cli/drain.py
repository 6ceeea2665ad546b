"""``roost drain`` (and ``condor_drain``): stop new jobs on every slot of an execute
machine and let, or make, its running jobs end; ``-cancel`` lets jobs in again.

  -graceful           let running jobs finish (a job's MaxJobRetirementTime, when it
                      has one, bounds the wait); the default
  -quick              vacate running jobs now, giving each its vacate time
  -fast               kill running jobs now
  -reason TEXT        why, shown in the slots' DrainReason
  -cancel             stop draining: the slots take jobs again, running jobs carry on
  -request-id ID      with -cancel: only if the machine drains under this request
  -pool HOST:PORT     the pool's collector

MACHINE is the machine's name as its slots' Machine attribute has it (`roost status`
lists them). Draining needs an ADMINISTRATOR token. The slots show Drained/Retiring
while their jobs still run, Drained/Idle once empty.
"""

from __future__ import annotations

import sys

from attrs import define

from bindings.cli.options import CommandLine, Option, Reading, UsageError, run_command

SCHEDULES = ("-graceful", "-quick", "-fast")
USAGE = ("usage: roost drain [-pool HOST:PORT] [-graceful | -quick | -fast] [-reason TEXT] MACHINE\n"
         "       roost drain [-pool HOST:PORT] -cancel [-request-id ID] MACHINE\n\n" + __doc__.split("\n\n", 1)[1])

COMMAND = CommandLine("roost drain", USAGE, [
    Option("-graceful"), Option("-quick"), Option("-fast"), Option("-cancel"),
    Option("-reason", 1, needs="TEXT"), Option("-request-id", 1, needs="ID"),
    Option("-pool", 1, needs="HOST:PORT"),
])


@define
class DrainCommand:
    """What a ``roost drain`` command line asks for; mutable while the arguments are read."""

    machine: str = ""
    how: str = "graceful"
    reason: str | None = None
    cancel: bool = False
    request_id: str | None = None
    pool: str | None = None


def request_of(reading: Reading) -> DrainCommand:
    """The request a read command line makes.

    Raises:
        UsageError: no machine or more than one, two schedules, or a schedule, a reason
            with -cancel, or -request-id without it.
    """
    if len(reading.operands) != 1:
        raise UsageError("name one machine to drain" if not reading.operands
                         else f"unexpected argument {reading.operands[1]!r}: name one machine")
    command = DrainCommand(machine=reading.operands[0])
    schedules = [g.name for g in reading.options if g.name in SCHEDULES]
    if len(schedules) > 1:
        raise UsageError(f"{schedules[0]} and {schedules[1]} cannot both be given")
    for given in reading.options:
        if given.name == "-reason":
            command.reason = given.value
        elif given.name == "-request-id":
            command.request_id = given.value
        elif given.name == "-pool":
            command.pool = given.value
        elif given.name == "-cancel":
            command.cancel = True
        elif given.name in SCHEDULES:
            command.how = given.name[1:]
    if command.cancel and (schedules or command.reason is not None):
        raise UsageError(f"-cancel takes no {schedules[0] if schedules else '-reason'}")
    if command.request_id is not None and not command.cancel:
        raise UsageError("-request-id goes with -cancel")
    return command


def startd_address(pool: str | None, machine: str) -> tuple[str, str | None]:
    """The address of ``machine``'s startd and the token to send it.

    Raises:
        ValueError: the collector has no slot of that machine.
    """
    import classad
    from bindings.collector import Collector
    from bindings.enums import AdType
    from bindings.pool import pool_token

    collector = Collector(pool)
    ads = collector.query(AdType.Startd, f"Machine == {classad.quote(machine)}", ["Machine", "MyAddress"], limit=1)
    address = ads[0].get("MyAddress") if ads else None
    if not isinstance(address, str) or not address.strip("<> "):
        raise ValueError(f"the collector at {collector.address} knows no machine named {machine!r} "
                         f"(`roost status` lists the machines by their Machine name)")
    return address.strip().strip("<>"), pool_token(collector.pool)


def run(command: DrainCommand) -> str:
    """Send the drain (or its cancel) to the machine's startd; what to print.

    Raises:
        ValueError: no such machine. RemoteError: the startd refused (403 without an
            ADMINISTRATOR token; 409 cancelling a machine that is not draining).
        Unreachable: the startd does not answer.
    """
    from daemoncore.wire import startd_routes as api
    from daemoncore.wire.blocking_client import BlockingClient

    address, token = startd_address(command.pool, command.machine)
    client = BlockingClient(address, token=token)
    if command.cancel:
        body = {} if command.request_id is None else {"request_id": command.request_id}
        client.call(api.CANCEL_DRAIN, body)
        return f"Sent request to cancel draining on {command.machine}\n"
    body = {"how": command.how} if command.reason is None else {"how": command.how, "reason": command.reason}
    answer = client.call(api.DRAIN, body)
    return (f"Sent request to drain {command.machine} ({command.how}); request id {answer.get('request_id')}, "
            f"{answer.get('retiring', 0)} of {answer.get('slots', 0)} slots still running jobs\n")


def main(argv: list[str]) -> int:
    """Run ``roost drain``; 0 on success, 1 on an error it explains in one line, 2 for a bad command line."""
    return run_command(COMMAND, argv, lambda reading: _run(request_of(reading)))


def _run(command: DrainCommand) -> int:
    from bindings.cli.schedd_session import run_reporting

    def work() -> int:
        sys.stdout.write(run(command))
        return 0

    return run_reporting("roost drain", work, daemon="startd",
                         unreachable_hint="is the machine's startd running? `roost status` lists the machines",
                         forbidden_hint="draining needs an ADMINISTRATOR token")


def condor_drain() -> int:
    """The ``condor_drain`` console entry point."""
    return main(sys.argv[1:])
