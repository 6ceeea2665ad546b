"""``SubmitResult`` keeps the schedd's cluster ad as answered and decodes it once, when
``clusterad()`` is first asked for; an ad given as a ClassAd is returned as is."""

from __future__ import annotations

import pytest

import classad
from bindings.schedd import SubmitResult


def test_the_answered_cluster_ad_is_decoded_on_first_use_only():
    """A wire ad becomes a ClassAd (expressions included) on the first call, the same object after."""
    result = SubmitResult(7, 0, 1, {"ClusterId": 7, "Requirements": "/Expr(Cpus >= 1)/", "Cmd": "/bin/true"})
    assert (result.cluster(), result.first_proc(), result.num_procs()) == (7, 0, 1)
    ad = result.clusterad()
    assert isinstance(ad, classad.ClassAd)
    assert ad["ClusterId"] == 7 and ad["Cmd"] == "/bin/true"
    assert str(ad.lookup("Requirements")) == "Cpus >= 1"
    assert result.clusterad() is ad


def test_a_classad_is_kept_as_given():
    """A ClassAd passed in is what clusterad() returns."""
    ad = classad.ClassAd({"ClusterId": 3})
    assert SubmitResult(3, 0, 2, ad).clusterad() is ad


def test_a_malformed_answer_is_a_value_error_when_read():
    """An answered cluster ad that is not an ad raises ValueError from clusterad()."""
    with pytest.raises(ValueError, match="the cluster ad"):
        SubmitResult(1, 0, 1, ["not", "an", "ad"]).clusterad()


def test_an_attribute_is_looked_for_without_decoding_the_ad():
    """clusterad_has answers from the wire ad, names compared without regard to case, and leaves it undecoded."""
    result = SubmitResult(7, 0, 1, {"ClusterId": 7, "RequestGPUMemory": 2048})
    assert result.clusterad_has("requestgpumemory") and not result.clusterad_has("RequestGPUs")
    assert not isinstance(result._cluster_ad, classad.ClassAd)
    assert SubmitResult(3, 0, 1, classad.ClassAd({"ClusterId": 3})).clusterad_has("clusterid")
