"""Tests of schedd/flock_advertiser.py on task.Clock: which flock collector gets which
Submitter ads, with which token, and what a refusal or an untrusted collector does."""

import pytest
from twisted.internet import task
from twisted.internet.defer import fail, succeed
from twisted.logger import globalLogPublisher

from daemoncore.config import Config
from daemoncore.security.pool_trust import TrustedPool, TrustedPools
from daemoncore.wire.errors import RemoteError, Unreachable
from schedd.flock_advertiser import FlockAdvertiser, flocked_ads
from schedd.flocking import FlockLevels, FlockSettings

POOLS = {name: TrustedPool(name=name, collector=f"{host}:9618?tls=1", ca_pem="(pem)", token=f"token-of-{name}")
         for name, host in (("poolB", "198.18.1.2"), ("poolC", "198.18.2.2"))}


class Collectors:
    """Flock collectors answering ADVERTISE and INVALIDATE; ``refusing`` maps an address to its error."""

    def __init__(self):
        self.calls = []
        self.refusing = {}

    def client_for(self, address, token):
        outer = self

        class Client:
            def call(self, route, body=None, **params):
                outer.calls.append((address, token, route.name, body))
                error = outer.refusing.get(address)
                return fail(error) if error is not None else succeed({"ok": True})
        return Client()

    def sent(self, address, route="advertise"):
        return [body for where, _, name, body in self.calls if where == address and name == route]


@pytest.fixture
def clock():
    return task.Clock()


@pytest.fixture
def collectors():
    return Collectors()


def advertiser(clock, collectors, text="FLOCK_TO = 198.18.1.2, 198.18.2.2\n", pools=("poolB", "poolC")):
    trusted = TrustedPools()
    trusted.replace({name: POOLS[name] for name in pools})
    levels = FlockLevels(FlockSettings.from_config(Config.from_text(text)), clock, 10.0)
    return FlockAdvertiser(levels, trusted, collectors.client_for)


def submitter(name="alice@poolA", idle=3):
    return {"MyType": "Submitter", "Name": name, "Owner": name.split("@")[0], "IdleJobs": idle}


#: Where the flock collectors are called: at the address their pool gave with its trust
#: (it says they speak TLS), not FLOCK_TO's bare host.
B, C = POOLS["poolB"].collector, POOLS["poolC"].collector


def home_cycles_leave_jobs_idle(flock):
    """Two home negotiation cycles that leave alice's jobs idle: her level becomes 1."""
    flock.levels.negotiating("alice@poolA", 0, idle=3)
    flock.levels.negotiating("alice@poolA", 0, idle=3)


def test_level_zero_sends_nothing(clock, collectors):
    """MIN_FLOCK_LEVEL 0 and no cycle left jobs idle: no flock collector hears of the submitter."""
    flock = advertiser(clock, collectors)
    flock.advertise([submitter()])
    assert collectors.calls == [] and flock.effective_flock_list() == ""


def test_the_first_pool_gets_the_ad_with_its_own_token(clock, collectors):
    """At level 1 pool B's collector gets the ad, sent with the token pool B gave."""
    flock = advertiser(clock, collectors)
    home_cycles_leave_jobs_idle(flock)
    flock.advertise([submitter()])
    assert [(where, token) for where, token, _, _ in collectors.calls] == [(B, "token-of-poolB")]
    assert [ad["Name"] for ad in collectors.sent(B)[0]["ads"]] == ["alice@poolA"]
    assert flock.effective_flock_list() == "198.18.1.2:9618"  # FLOCK_TO's collector, as configured


def test_a_refusal_is_logged_naming_the_pool_and_moves_on_to_the_next(clock, collectors):
    """Pool B's 403 is logged with the pool's name and reason; the submitter goes to pool C next."""
    logged = []
    globalLogPublisher.addObserver(logged.append)
    try:
        flock = advertiser(clock, collectors, "FLOCK_TO = 198.18.1.2, 198.18.2.2\nMIN_FLOCK_LEVEL = 1\n")
        collectors.refusing[B] = RemoteError(403, "forbidden", "flock@poolA: schedd not in FLOCK_FROM")
        flock.advertise([submitter()])
    finally:
        globalLogPublisher.removeObserver(logged)
    text = [e["log_format"].format(**e) for e in logged if "refused" in e.get("log_format", "")]
    assert text and "pool poolB" in text[0] and "not in FLOCK_FROM" in text[0]
    assert flock.levels.targets("alice@poolA") == (2,)
    flock.advertise([submitter()])
    assert collectors.sent(C) and len(collectors.sent(B)) == 1


def test_an_unreachable_collector_is_tried_again_after_the_avoidance_time(clock, collectors):
    """A dead collector is skipped for DEAD_COLLECTOR_MAX_AVOIDANCE_TIME, then tried again."""
    flock = advertiser(clock, collectors, "FLOCK_TO = 198.18.1.2\nMIN_FLOCK_LEVEL = 1\n"
                       "DEAD_COLLECTOR_MAX_AVOIDANCE_TIME = 60\n")
    collectors.refusing[B] = Unreachable("no answer")
    flock.advertise([submitter()])
    flock.advertise([submitter()])
    assert len(collectors.sent(B)) == 1
    del collectors.refusing[B]
    clock.advance(60)
    flock.advertise([submitter()])
    assert len(collectors.sent(B)) == 2


def test_an_untrusted_collector_is_skipped_and_the_next_pool_tried(clock, collectors):
    """A FLOCK_TO entry with no trusted pool gets nothing; the submitter goes on to the next pool."""
    flock = advertiser(clock, collectors, "FLOCK_TO = 198.18.1.2, 198.18.2.2\nMIN_FLOCK_LEVEL = 1\n",
                       pools=("poolC",))
    flock.advertise([submitter()])
    flock.advertise([submitter()])
    assert collectors.sent(B) == [] and collectors.sent(C)


def test_a_submitter_with_no_idle_jobs_is_withdrawn(clock, collectors):
    """When the level falls back, the flock collector is told to forget the submitter."""
    flock = advertiser(clock, collectors)
    home_cycles_leave_jobs_idle(flock)
    flock.advertise([submitter()])
    flock.advertise([submitter(idle=0)])
    assert collectors.sent(B, "invalidate") == [{"names": ["alice@poolA"]}]


def test_flocked_jobs_are_counted_per_owner():
    """FlockedJobs is the submitter's count of jobs running in other pools (0 when none)."""
    ads = flocked_ads([submitter(), submitter("bob@poolA")], {"alice": 2})
    assert [ad["FlockedJobs"] for ad in ads] == [2, 0]


def test_flocked_jobs_of_one_owner_are_counted_per_submitter():
    """alice's own jobs and her group_a jobs are two submitters: each ad gets its own count."""
    ads = [submitter(), {**submitter("group_a.alice@poolA"), "Owner": "alice", "AccountingGroup": "group_a.alice"}]
    flocked = flocked_ads(ads, {"alice": 1, "group_a.alice": 2})
    assert [ad["FlockedJobs"] for ad in flocked] == [1, 2]
