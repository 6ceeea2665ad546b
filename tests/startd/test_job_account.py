"""Which account runs a job: the pure decision of startd.job_account, with a made-up
account table instead of the host's."""

import unittest

import classad
from daemoncore.config import ConfigError
from daemoncore.security.accounts import Account
from startd.job_account import RunAsPolicy, choose_account, slot_number

ACCOUNTS = {
    "alice": Account("alice", 1001, 1001, (1001, 50)),
    "root": Account("root", 0, 0, (0,)),
    "nobody": Account("nobody", 65534, 65534, (65534,)),
    "slotuser1": Account("slotuser1", 2001, 2001, (2001,)),
}
ME = Account("daemon-user", 1500, 1500)


def lookup(name):
    return ACCOUNTS.get(name)


def job(**attrs):
    return classad.ClassAd({"Owner": "alice", "UidDomain": "example.org", **attrs})


def policy(**changes):
    return RunAsPolicy(**{"switch_user": True, "uid_domain": "example.org", **changes})


def chosen(ad, slot="slot1@host", **changes):
    return choose_account(ad, slot, policy(**changes), lookup, ME).account.name


class ChooseAccountTests(unittest.TestCase):
    def test_owner_with_local_account_and_same_uid_domain_runs_as_owner(self):
        """A job whose Owner exists here, from the same UID_DOMAIN, runs as that owner."""
        self.assertEqual(chosen(job()), "alice")

    def test_uid_domain_is_compared_without_case(self):
        """UID_DOMAIN is a domain name: EXAMPLE.org matches example.org."""
        self.assertEqual(chosen(job(UidDomain="EXAMPLE.org")), "alice")

    def test_other_uid_domain_runs_as_nobody(self):
        """A job from another UID_DOMAIN runs as the nobody slot user."""
        self.assertEqual(chosen(job(UidDomain="elsewhere.org")), "nobody")

    def test_job_without_uid_domain_runs_as_nobody(self):
        """No UidDomain in the job ad counts as not matching."""
        ad = job()
        del ad["UidDomain"]
        self.assertEqual(chosen(ad), "nobody")

    def test_owner_without_local_account_runs_as_nobody(self):
        """mallory has no account on this host: the job runs as nobody."""
        self.assertEqual(chosen(job(Owner="mallory")), "nobody")

    def test_owner_root_never_runs_as_root(self):
        """A job of root runs as the slot user, never uid 0."""
        self.assertEqual(chosen(job(Owner="root")), "nobody")

    def test_runas_owner_turned_off_uses_slot_user(self):
        """STARTER_ALLOW_RUNAS_OWNER = false: even alice's job runs as the slot user."""
        self.assertEqual(chosen(job(), allow_runas_owner=False), "nobody")

    def test_dedicated_slot_user_replaces_nobody(self):
        """SLOT1_USER is used on slot1 and its dynamic slots, not on slot2."""
        users = {1: "slotuser1"}
        self.assertEqual(chosen(job(Owner="mallory"), "slot1@host", slot_users=users), "slotuser1")
        self.assertEqual(chosen(job(Owner="mallory"), "slot1_3@host", slot_users=users), "slotuser1")
        self.assertEqual(chosen(job(Owner="mallory"), "slot2@host", slot_users=users), "nobody")

    def test_not_root_every_job_runs_as_the_startd_user(self):
        """A personal pool of an ordinary user: its jobs run as that user, whoever owns them."""
        self.assertEqual(chosen(job(), switch_user=False), "daemon-user")
        self.assertEqual(chosen(job(Owner="mallory"), switch_user=False), "daemon-user")

    def test_the_reason_names_the_slot_user_knob_and_why(self):
        """The logged reason says which knob chose the account and why the owner was not used."""
        reason = choose_account(job(Owner="mallory"), "slot1", policy(), lookup, ME).reason
        self.assertIn("NOBODY_SLOT_USER", reason)
        self.assertIn("mallory", reason)

    def test_missing_slot_user_is_a_lookup_error(self):
        """A slot user that vanished is an error, not a silent fall-back to root."""
        with self.assertRaises(LookupError):
            choose_account(job(Owner="mallory"), "slot1", policy(nobody_user="ghost"), lookup, ME)


class PolicyCheckTests(unittest.TestCase):
    def test_unknown_slot_user_is_refused_at_start_up(self):
        """SLOT1_USER naming no account stops the startd with the knob named."""
        with self.assertRaisesRegex(ConfigError, "SLOT1_USER = ghost"):
            policy(slot_users={1: "ghost"}).check(lookup)

    def test_root_as_slot_user_is_refused(self):
        """NOBODY_SLOT_USER = root would run jobs as root: refused."""
        with self.assertRaisesRegex(ConfigError, "NOBODY_SLOT_USER = root"):
            policy(nobody_user="root").check(lookup)

    def test_not_root_needs_no_slot_users(self):
        """A startd that cannot switch users never looks its slot users up."""
        policy(switch_user=False, nobody_user="ghost").check(lookup)


class SlotNumberTests(unittest.TestCase):
    def test_slot_numbers(self):
        """slot7, slot7_2 and slot7@host are slot 7; other names have none."""
        self.assertEqual([slot_number(n) for n in ("slot7", "slot7_2", "slot7@h.org", "other")], [7, 7, 7, None])


class FromConfigTests(unittest.TestCase):
    def test_knobs_are_read(self):
        """SLOT<N>_USER, NOBODY_SLOT_USER and STARTER_ALLOW_RUNAS_OWNER come from the config."""
        from daemoncore.config import Config

        config = Config.from_text("SLOT2_USER = slotuser1\nNOBODY_SLOT_USER = nobody\n"
                                  "STARTER_ALLOW_RUNAS_OWNER = false\n")
        found = RunAsPolicy.from_config(config, "example.org")
        self.assertEqual((dict(found.slot_users), found.nobody_user, found.allow_runas_owner),
                         ({2: "slotuser1"}, "nobody", False))

    def test_runas_owner_defaults_to_true(self):
        """With no knobs, jobs may run as their owners and the slot user is nobody."""
        from daemoncore.config import Config

        found = RunAsPolicy.from_config(Config.from_text(""), "example.org")
        self.assertEqual((found.allow_runas_owner, found.nobody_user), (True, "nobody"))
