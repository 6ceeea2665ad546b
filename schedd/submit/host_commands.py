"""Running a command of the submitting user's (``queue ... from cmd |``,
``include : cmd |``) and reading what it prints. Only the submit client calls this:
the schedd refuses both forms before anything runs."""

from __future__ import annotations

from schedd.submit.errors import SubmitError

#: How long a command may run, in seconds.
COMMAND_TIMEOUT = 60
#: How much of its output is read, in bytes.
MAX_OUTPUT = 16 << 20


def command_output(command: str, cwd: str, *, what: str, submit_command: str) -> str:
    """What ``command`` (split on blanks, run without a shell, in ``cwd``) prints.

    Raises:
        SubmitError: no command, it cannot start, it runs too long, or it prints too much.
    """
    import subprocess  # loaded only when a description runs a command

    words = command.split()
    if not words:
        raise SubmitError(f"'{what}' needs a command before the '|'", command=submit_command)
    try:
        done = subprocess.run(words, cwd=cwd, capture_output=True, timeout=COMMAND_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SubmitError(f"cannot run {command!r}: {exc}", command=submit_command) from None
    if len(done.stdout) > MAX_OUTPUT:
        raise SubmitError(f"{command!r} printed more than {MAX_OUTPUT >> 20} MiB",
                          command=submit_command)
    return done.stdout.decode("utf-8", "surrogateescape")
