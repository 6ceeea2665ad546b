"""Which local account runs a job, decided the way HTCondor's starter does.

When the startd runs as root, a job runs as its ``Owner``'s local account if that
account exists here, is not root, the job's ``UidDomain`` equals this machine's
``UID_DOMAIN`` and ``STARTER_ALLOW_RUNAS_OWNER`` is true; otherwise as the slot's
dedicated user ``SLOT<N>_USER``, else ``NOBODY_SLOT_USER`` (``nobody``). A job never
runs as root. When the startd runs as an ordinary user, every job runs as that user.

:func:`choose_account` is pure: the account lookup is passed in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import attrs

import classad
from daemoncore.config import Config, ConfigError
from daemoncore.security.accounts import Account, can_switch_user, current_account, local_account

DEFAULT_NOBODY_SLOT_USER = "nobody"

Lookup = Callable[[str], "Account | None"]

_SLOT_NUMBER = re.compile(r"^slot(\d+)(?:_\d+)?(?:@.*)?$", re.IGNORECASE)


@attrs.frozen
class RunAsPolicy:
    """The knobs that decide a job's account on this startd.

    ``switch_user`` says whether the startd may act as other accounts (it runs as
    root); ``slot_users`` maps a slot number to its ``SLOT<N>_USER``.
    """

    switch_user: bool
    uid_domain: str
    allow_runas_owner: bool = True
    slot_users: Mapping[int, str] = attrs.field(factory=dict)
    nobody_user: str = DEFAULT_NOBODY_SLOT_USER

    @classmethod
    def from_config(cls, config: Config, uid_domain: str) -> "RunAsPolicy":
        """The policy of the startd configured by ``config`` (run by this process).

        Raises:
            ConfigError: ``STARTER_ALLOW_RUNAS_OWNER`` is not a boolean.
        """
        slot_users = {}
        for name in config.names():
            match = re.fullmatch(r"SLOT(\d+)_USER", name, re.IGNORECASE)
            if match and (config.param(name) or "").strip():
                slot_users[int(match.group(1))] = config.param(name).strip()
        return cls(switch_user=can_switch_user(), uid_domain=uid_domain,
                   allow_runas_owner=bool(config.param_bool("STARTER_ALLOW_RUNAS_OWNER", True)),
                   slot_users=slot_users,
                   nobody_user=(config.param("NOBODY_SLOT_USER") or DEFAULT_NOBODY_SLOT_USER).strip())

    def check(self, lookup: Lookup = local_account) -> None:
        """Refuse a slot user that does not exist here or is root, so a bad
        ``SLOT<N>_USER`` stops the startd at start-up instead of holding every job.

        Raises:
            ConfigError: naming the knob and the account.
        """
        if not self.switch_user:
            return
        knobs = {f"SLOT{n}_USER": user for n, user in sorted(self.slot_users.items())}
        knobs["NOBODY_SLOT_USER"] = self.nobody_user
        for knob, user in knobs.items():
            account = lookup(user)
            if account is None:
                raise ConfigError(f"{knob} = {user}: there is no local account by that name")
            if account.is_root:
                raise ConfigError(f"{knob} = {user}: jobs never run as root; name an unprivileged account")


@attrs.frozen
class JobAccount:
    """The account chosen for a job, and why (for the log)."""

    account: Account
    reason: str


def slot_number(slot_name: str) -> int | None:
    """``1`` for ``slot1``, ``slot1_3`` or ``slot1@host``; None for other names."""
    match = _SLOT_NUMBER.match(slot_name or "")
    return int(match.group(1)) if match else None


def _string(job: classad.ClassAd, attr: str) -> str | None:
    value = job.eval(attr) if attr in job else None
    return value if isinstance(value, str) and value else None


def _owner_refusal(job: classad.ClassAd, policy: RunAsPolicy, lookup: Lookup) -> str | Account:
    """The owner's account when the job may run as it, else why not."""
    owner = _string(job, "Owner")
    if not policy.allow_runas_owner:
        return "STARTER_ALLOW_RUNAS_OWNER is false"
    if owner is None:
        return "the job has no Owner"
    account = lookup(owner)
    if account is None:
        return f"there is no local account {owner!r}"
    if account.is_root:
        return f"the owner {owner!r} is root, and jobs never run as root"
    domain = _string(job, "UidDomain")
    if domain is None or domain.lower() != policy.uid_domain.lower():
        return f"its UidDomain {domain!r} is not this machine's UID_DOMAIN {policy.uid_domain!r}"
    return account


def choose_account(job: classad.ClassAd, slot_name: str, policy: RunAsPolicy,
                   lookup: Lookup = local_account, me: Account | None = None) -> JobAccount:
    """The account ``job`` runs as on slot ``slot_name``; ``me`` is the startd's own
    account (looked up when not given).

    Raises:
        LookupError: the slot user has no local account (``RunAsPolicy.check`` catches
            this at start-up), or is root.
    """
    if not policy.switch_user:
        return JobAccount(me or current_account(), "the startd does not run as root")
    owner = _owner_refusal(job, policy, lookup)
    if isinstance(owner, Account):
        return JobAccount(owner, "the job's owner")
    number = slot_number(slot_name)
    knob, user = ((f"SLOT{number}_USER", policy.slot_users[number]) if number in policy.slot_users
                  else ("NOBODY_SLOT_USER", policy.nobody_user))
    account = lookup(user)
    if account is None or account.is_root:
        raise LookupError(f"{knob} = {user}: {'no such local account' if account is None else 'is root'}")
    return JobAccount(account, f"{knob} ({owner})")
