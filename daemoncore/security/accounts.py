"""Local accounts: which uid, gid and groups a user name stands for on this host, and
whether the daemons run with the privilege to act as another account.

When the daemons run as root, a job runs as its owner's account and the schedd touches
a job's files as that account; when they run as an ordinary user (a personal pool),
everything runs as that user, as before. This module only answers the questions; the
startd and the schedd decide what to do with the answers.
"""

from __future__ import annotations

import os
import pwd
import time

import attrs


@attrs.frozen
class Account:
    """A local account: its name, uid, primary gid and supplementary group ids."""

    name: str
    uid: int
    gid: int
    groups: tuple[int, ...] = ()
    home: str = "/"

    @property
    def is_root(self) -> bool:
        """Whether this is the superuser, which no job ever runs as."""
        return self.uid == 0


def can_switch_user() -> bool:
    """Whether this process may act as other accounts (it runs as root)."""
    return os.geteuid() == 0


#: How long a found account is remembered: the schedd looks one up at every transfer
#: step and event, in its reactor, and the lookup may go to a directory service.
ACCOUNT_MEMORY_SECONDS = 60.0
_MAX_REMEMBERED = 1024
_remembered: dict[str, tuple[float, Account]] = {}


def local_account(name: str) -> Account | None:
    """The local account called ``name`` (with its supplementary groups), or None when
    this host has none by that name. Found accounts are remembered for a minute."""
    if not name or "\x00" in name or "/" in name:
        return None
    now = time.monotonic()
    known = _remembered.get(name)
    if known is not None and now - known[0] < ACCOUNT_MEMORY_SECONDS:
        return known[1]
    try:
        account = _account(pwd.getpwnam(name))
    except (KeyError, UnicodeEncodeError):
        return None
    if len(_remembered) >= _MAX_REMEMBERED:
        _remembered.clear()
    _remembered[name] = (now, account)
    return account


def account_of_uid(uid: int) -> Account | None:
    """The local account with this uid, or None."""
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:
        return None
    return _account(entry)


def current_account() -> Account:
    """The account this process runs as (its effective uid)."""
    found = account_of_uid(os.geteuid())
    if found is not None:
        return found
    return Account(name=str(os.geteuid()), uid=os.geteuid(), gid=os.getegid(), groups=tuple(os.getgroups()))


def _account(entry: pwd.struct_passwd) -> Account:
    try:
        groups = os.getgrouplist(entry.pw_name, entry.pw_gid)
    except OSError:
        groups = [entry.pw_gid]
    return Account(name=entry.pw_name, uid=entry.pw_uid, gid=entry.pw_gid,
                   groups=tuple(sorted(set(groups))), home=entry.pw_dir)

