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
