"""Tests for collector.routes, served in memory."""

import pytest

READ, DAEMON = "READ", "DAEMON"  # the call fixture turns these into real tokens


def slots(*names, **attrs):
    return [{"Name": name, "Machine": name.split("@")[-1], **attrs} for name in names]


def test_advertise_then_query_returns_the_ads(call):
    """Ads advertised with a DAEMON token come back from a READ query."""
    response = call("/v1/ads/Startd", {"ads": slots("slot1@a", "slot2@a", Cpus=4)})
    assert (response.status, response.json()) == (200, {"updated": 2})
    response = call("/v1/ads/Machine/query", {}, token=READ)
    assert response.status == 200
    ads = response.lines()
    assert sorted(ad["Name"] for ad in ads) == ["slot1@a", "slot2@a"]
    assert all(ad["MyType"] == "Machine" and ad["Cpus"] == 4 for ad in ads)


def test_collector_stamps_last_heard_from(call, clock):
    """Each stored ad carries LastHeardFrom, the collector's time of receipt."""
    clock.advance(1234)
    call("/v1/ads/Machine", {"ads": slots("a")})
    [ad] = call("/v1/ads/Machine/query", token=READ).lines()
    assert ad["LastHeardFrom"] == 1234


def test_read_token_cannot_advertise(call):
    """Advertising needs DAEMON: a READ token gets 403 and nothing is stored."""
    response = call("/v1/ads/Machine", {"ads": slots("a")}, token=READ)
    assert response.status == 403
    assert call("/v1/ads/Machine/query", token=READ).lines() == []


def test_query_without_token_is_401(call):
    """A query with no token is refused with 401."""
    assert call("/v1/ads/Machine/query", {}, token=None).status == 401


def test_one_bad_ad_stores_none(call):
    """An update with one bad ad is a 400 naming it, and changes nothing."""
    response = call("/v1/ads/Machine", {"ads": slots("a") + [{"Cpus": 1}]})
    assert response.status == 400
    assert response.json()["message"].startswith("$.ads[1]: ad has no Name")
    assert call("/v1/ads/Machine/query", token=READ).lines() == []


@pytest.mark.parametrize(
    "body, fragment",
    [({"ads": "nope"}, "$.ads: expected a list"),
     ({"ads": [3]}, "$.ads[0]: a ClassAd must be a JSON object"),
     ({"ads": [], "privat": True}, "$.privat: unknown field"),
     ({"ads": [{"Name": "a", "ClassAdLifetime": "long"}]}, "ClassAdLifetime must be a positive number")],
)
def test_malformed_updates_get_400s_that_say_why(call, body, fragment):
    """Malformed update bodies are 400s naming the field."""
    response = call("/v1/ads/Machine", body)
    assert response.status == 400
    assert fragment in response.json()["message"]


def test_bad_ad_type_and_any_are_refused(call):
    """Ad types must be names, and Any cannot be advertised."""
    assert call("/v1/ads/no-such!/query", {}, token=READ).status == 400
    assert call("/v1/ads/Any", {"ads": slots("a")}).status == 400


def test_private_ads_need_daemon_level(call):
    """Private ads are stored apart and readable only with a DAEMON token."""
    call("/v1/ads/Machine", {"ads": slots("a")})
    call("/v1/ads/Machine", {"ads": slots("a", ClaimId="secret"), "private": True})
    assert "ClaimId" not in call("/v1/ads/Machine/query", {}, token=READ).lines()[0]
    assert call("/v1/ads/Machine/query", {"private": True}, token=READ).status == 403
    [ad] = call("/v1/ads/Machine/query", {"private": True}, token=DAEMON).lines()
    assert ad["ClaimId"] == "secret"


def test_projection_and_limit(call):
    """A projection keeps only the named attributes (any case); limit caps the count."""
    call("/v1/ads/Machine", {"ads": slots(*[f"s{n}@a" for n in range(10)], Cpus=1, Memory=2)})
    ads = call("/v1/ads/Machine/query", {"projection": ["name", "CPUS"], "limit": 3}, token=READ).lines()
    assert len(ads) == 3
    assert all(set(ad) == {"Name", "Cpus"} for ad in ads)


def test_negative_limit_is_refused(call):
    """A negative limit is a 400."""
    assert call("/v1/ads/Machine/query", {"limit": -1}, token=READ).status == 400


def test_invalidate_by_name(call):
    """Invalidating by Name removes that ad only."""
    call("/v1/ads/Machine", {"ads": slots("a", "b")})
    assert call("/v1/ads/Machine/invalidate", {"names": ["a"]}).json() == {"invalidated": 1}
    assert [ad["Name"] for ad in call("/v1/ads/Machine/query", token=READ).lines()] == ["b"]


def test_invalidate_needs_exactly_one_selector(call):
    """Invalidation takes names or a constraint, not both or neither."""
    assert call("/v1/ads/Machine/invalidate", {}).status == 400
    assert call("/v1/ads/Machine/invalidate", {"names": [], "constraint": "true"}).status == 400


def test_ads_expire_after_their_lifetime(call, clock):
    """An ad is answered until its ClassAdLifetime passes, then not."""
    call("/v1/ads/Machine", {"ads": slots("a", ClassAdLifetime=30)})
    clock.advance(29)
    assert len(call("/v1/ads/Machine/query", token=READ).lines()) == 1
    clock.advance(1)
    assert call("/v1/ads/Machine/query", token=READ).lines() == []


def test_any_query_spans_types(call):
    """A query of type Any returns ads of every type."""
    call("/v1/ads/Machine", {"ads": slots("a")})
    call("/v1/ads/Schedd", {"ads": [{"Name": "schedd@a"}]})
    types = sorted(ad["MyType"] for ad in call("/v1/ads/Any/query", token=READ).lines())
    assert types == ["Machine", "Scheduler"]


def test_metrics_count_ads_and_updates(call):
    """/metrics reports ads per type and the updates counted."""
    call("/v1/ads/Machine", {"ads": slots("a", "b")})
    text = call("/metrics", token=READ, method="GET").body.decode()
    assert 'roost_collector_ads{private="false",type="Machine"} 2.0' in text
    assert 'roost_collector_updates_total{type="Machine"} 2.0' in text


def test_constraint_selects_ads(call):
    """A constraint query returns only the ads it is true for."""
    call("/v1/ads/Machine", {"ads": slots("small", Cpus=1) + slots("big", Cpus=16)})
    ads = call("/v1/ads/Machine/query", {"constraint": "Cpus > 4"}, token=READ).lines()
    assert [ad["Name"] for ad in ads] == ["big"]


def test_expression_attributes_round_trip(call):
    """An expression attribute travels as "\\/Expr(...)\\/" and is evaluated by constraints."""
    call("/v1/ads/Machine", {"ads": slots("a", Cpus=2, Double="/Expr(Cpus * 2)/")})
    [ad] = call("/v1/ads/Machine/query", {"constraint": "Double == 4"}, token=READ).lines()
    assert ad["Double"] == "/Expr(Cpus * 2)/"


def test_bad_constraint_is_400_naming_the_parse_error(call):
    """A constraint that does not parse is a 400 quoting it and the parser's complaint."""
    response = call("/v1/ads/Machine/query", {"constraint": "Cpus >= (4"}, token=READ)
    assert response.status == 400
    assert "Cpus >= (4" in response.json()["message"]


def test_invalidate_by_constraint(call):
    """Invalidating by constraint removes exactly the matching ads."""
    call("/v1/ads/Machine", {"ads": slots("small", Cpus=1) + slots("big", Cpus=16)})
    assert call("/v1/ads/Machine/invalidate", {"constraint": "Cpus < 4"}).json() == {"invalidated": 1}


BAD_VALUES = [{"Start": "/Expr(1 +)/"}, {"Tags": ["/Expr(+)/"]}, {"Nested": {"x": "/Expr(&&)/"}},
              {"": 1}, {"Start": "/Expr(Cpus > 1)/", "Text": "/Expr(", "Tags": [1, "a"], "X": None},
              {"AvailableGPUs": [], "Nested": {}}]


@pytest.mark.parametrize("attrs", BAD_VALUES)
def test_ads_are_refused_on_their_values_as_the_ad_parser_refuses_them(call, attrs):
    """An ad is stored unparsed, but refused with the message ad_from_json gives for it,
    and accepted when ad_from_json accepts it."""
    from daemoncore.wire.adcodec import WireAdError, ad_from_json

    wire = {"Name": "a", **attrs}
    try:
        ad_from_json(wire, "$.ads[0]")
        expected = None
    except WireAdError as exc:
        expected = str(exc)
    response = call("/v1/ads/Machine", {"ads": [wire]})
    if expected is None:
        assert response.status == 200
    else:
        assert (response.status, response.json()["message"]) == (400, expected)


def test_a_repeated_query_answers_each_update_and_expiry(call, clock):
    """Queries answered from kept parts still show an ad replaced, withdrawn or expired
    between two identical queries, in stored order, projected as asked."""
    call("/v1/ads/Machine", {"ads": slots("s1@a", "s2@a", State="Unclaimed", Cpus=4)})
    query = {"constraint": 'State == "Unclaimed" && Cpus >= 4', "projection": ["Name", "Cpus"]}
    assert call("/v1/ads/Machine/query", query, token=READ).lines() == [{"Name": "s1@a", "Cpus": 4},
                                                                         {"Name": "s2@a", "Cpus": 4}]
    call("/v1/ads/Machine", {"ads": slots("s1@a", State="Unclaimed", Cpus=8)})
    assert call("/v1/ads/Machine/query", query, token=READ).lines() == [{"Name": "s1@a", "Cpus": 8},
                                                                         {"Name": "s2@a", "Cpus": 4}]
    call("/v1/ads/Machine", {"ads": slots("s3@a", State="Unclaimed", Cpus=4, ClassAdLifetime=5)})
    call("/v1/ads/Machine/invalidate", {"names": ["s1@a"]})
    assert [ad["Name"] for ad in call("/v1/ads/Machine/query", query, token=READ).lines()] == ["s2@a", "s3@a"]
    clock.advance(6)
    assert [ad["Name"] for ad in call("/v1/ads/Machine/query", query, token=READ).lines()] == ["s2@a"]


def test_a_large_update_is_stored_whole_over_several_turns(call, store, clock):
    """1,201 ads (more than one turn's worth) are all stored, and the answer counts them."""
    from collector.routes import ADS_PER_TURN

    names = [f"slot{n}@big" for n in range(2 * ADS_PER_TURN + 201)]
    response = call("/v1/ads/Machine", {"ads": slots(*names, Cpus=1)})
    assert (response.status, response.json()) == (200, {"updated": len(names)})
    assert len(call("/v1/ads/Machine/query", {"projection": ["Name"]}, token=READ).lines()) == len(names)


def test_a_bad_ad_late_in_a_large_update_stores_none_of_it(call):
    """An update checked over several turns still stores nothing when its last ad is bad."""
    from collector.routes import ADS_PER_TURN

    ads = slots(*(f"slot{n}@big" for n in range(2 * ADS_PER_TURN))) + [{"Cpus": 1}]
    response = call("/v1/ads/Machine", {"ads": ads})
    assert response.status == 400
    assert response.json()["message"].startswith(f"$.ads[{2 * ADS_PER_TURN}]: ad has no Name")
    assert call("/v1/ads/Machine/query", token=READ).lines() == []


def test_queries_are_answered_between_the_slices_of_a_large_update():
    """While a large update is stored the reactor gets turns between its slices: after
    each turn the store holds more of its ads, never all of them until the last."""
    import json
    from types import SimpleNamespace

    from collector.metrics import CollectorMetrics
    from collector.routes import ADS_PER_TURN, CollectorRoutes
    from collector.store import AdStore
    from tests.support.turns import TurnClock

    clock = TurnClock()
    store = AdStore(clock)
    names = [f"slot{n}@big" for n in range(3 * ADS_PER_TURN)]
    raw = json.dumps({"ads": slots(*names)}).encode()
    request = SimpleNamespace(params={"ad_type": "Machine"}, identity=None, body=raw, json=lambda: json.loads(raw))
    answered = []
    routes = CollectorRoutes(store, CollectorMetrics(store), timer=lambda: 0.0)  # time stands still
    routes.advertise(request).addCallback(answered.append)
    held = [store.counts(False).get("Machine", 0)]
    while clock.pending:
        clock.turn()
        held.append(store.counts(False).get("Machine", 0))
    assert answered and answered[0].body == {"updated": len(names)}
    assert [count for count in held if count] == [ADS_PER_TURN, 2 * ADS_PER_TURN, 3 * ADS_PER_TURN]


def test_an_update_slower_than_its_time_budget_is_spread_over_more_turns():
    """When checking or storing an ad takes a little over a tenth of SLICE_SECONDS, each turn
    checks or stores ten ads (however few an update holds), and the answer still counts
    them all."""
    import itertools
    import json
    from types import SimpleNamespace

    from collector.metrics import CollectorMetrics
    from collector.routes import SLICE_SECONDS, CollectorRoutes
    from collector.store import AdStore
    from tests.support.turns import TurnClock

    clock = TurnClock()
    store = AdStore(clock)
    names = [f"slot{n}@slow" for n in range(45)]
    raw = json.dumps({"ads": slots(*names)}).encode()
    request = SimpleNamespace(params={"ad_type": "Machine"}, identity=None, body=raw, json=lambda: json.loads(raw))
    ticks = itertools.count()
    routes = CollectorRoutes(store, CollectorMetrics(store), timer=lambda: next(ticks) * SLICE_SECONDS * 0.101)
    answered = []
    routes.advertise(request).addCallback(answered.append)
    held = [store.counts(False).get("Machine", 0)]
    while clock.pending:
        clock.turn()
        held.append(store.counts(False).get("Machine", 0))
    assert answered and answered[0].body == {"updated": len(names)}
    assert [count for count in held if count] == [5, 15, 25, 35, 45]


def test_a_large_body_is_decoded_a_piece_per_turn():
    """An update whose body is several pieces long is decoded over several reactor
    turns (nothing stored meanwhile), then stored whole; a bad ad in its last piece
    still refuses all of it."""
    import json
    from types import SimpleNamespace

    from collector.metrics import CollectorMetrics
    from collector.routes import CollectorRoutes
    from collector.store import AdStore
    from daemoncore.wire.errors import BadRequest
    from daemoncore.wire.request_body import PIECE_BYTES
    from tests.support.turns import TurnClock

    def advertise(ads):
        clock = TurnClock()
        store = AdStore(clock)
        raw = json.dumps({"ads": ads}).encode()
        assert len(raw) > 3 * PIECE_BYTES
        request = SimpleNamespace(params={"ad_type": "Machine"}, identity=None, body=raw, json=lambda: json.loads(raw))
        outcome = []
        CollectorRoutes(store, CollectorMetrics(store)).advertise(request).addBoth(outcome.append)
        turns = 0
        while clock.pending and not store.counts(False):
            clock.turn()
            turns += 1
        while clock.pending:
            clock.turn()
        return outcome[0], store.counts(False).get("Machine", 0), turns

    filler = "x" * 400
    names = [f"slot{n}@big" for n in range(10_000)]
    reply, held, turns = advertise(slots(*names, Filler=filler))
    assert (reply.body, held) == ({"updated": len(names)}, len(names))
    assert turns >= 3
    bad = slots(*names, Filler=filler)
    bad[-1]["Name"] = 7
    refused, held, _ = advertise(bad)
    assert (refused.check(BadRequest), held) == (BadRequest, 0)
