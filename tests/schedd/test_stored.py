"""How new procs are stored: the per-cluster encoder writes what encode_new_proc writes."""

from __future__ import annotations

import pytest

from schedd.queue.stored import _MARK_PROC, encode_new_proc, new_proc_encoder


@pytest.mark.parametrize("schedd_name", ["schedd@host.example", 'we"ird\\name', "h\u00e9te\n",
                                         f"has{_MARK_PROC}inside", ""])
@pytest.mark.parametrize("qdate", [1796212800, "1796212800", None])
def test_the_cluster_encoder_writes_each_proc_as_encode_new_proc_does(schedd_name, qdate):
    """Every proc id, any schedd name (quotes, escapes, the stand-in id itself) and QDate."""
    encode = new_proc_encoder(schedd_name, 42, qdate)
    for proc_id in (0, 1, 9, 10, 12345, _MARK_PROC, 10**12):
        assert encode(proc_id) == encode_new_proc(proc_id, f"{schedd_name}#42.{proc_id}#{qdate}")


def test_a_cluster_ad_is_written_as_encode_ad_writes_it_first_and_remembered(monkeypatch):
    """Same text from fresh and remembered nodes, after a change, and once the memory is cleared."""
    from classad import ClassAd
    from schedd.queue import stored

    monkeypatch.setattr(stored, "MAX_CLUSTER_TEXTS", 3)
    ad = ClassAd('[ Cmd = "/bin/sleep"; Args = "60"; RequestMemory = 64; Requirements = TARGET.Memory > 8 ]')
    for _ in range(3):
        assert stored.encode_cluster_ad(ad) == stored.encode_ad(ad)
    ad["Args"] = "61"
    assert stored.encode_cluster_ad(ad) == stored.encode_ad(ad)
    assert len(stored._CLUSTER_TEXTS) <= 3


def test_a_cluster_ad_is_encoded_as_encode_ad_encodes_it_with_its_pairs():
    """encode_cluster writes the text encode_ad writes (HTCondor's order, escapes, non-ASCII)
    and gives the pairs reading it back gives, however the ad's keys were inserted."""
    import json

    from classad import ClassAd
    from schedd.queue.stored import encode_ad, encode_cluster

    ads = [ClassAd({"Zed": 1, "a": 'say "hi"', "Cmd": "/bin/\u00e9t\u00e9", "Req": ClassAd({"x": 2})}),
           ClassAd('[ Foo = 1 + 2; bar = "q"; Zed = {1, 2}; a = undefined; Rank = MY.x * 2.5 ]')]
    ads.append(ads[1].derive([("Extra", ads[0].expression("a"))], deleted=["bar"]))
    for ad in ads * 2:  # the second time from what is remembered
        text, pairs = encode_cluster(ad)
        assert text == encode_ad(ad)
        assert pairs == {name.lower(): (name, value) for name, value in json.loads(text)}
