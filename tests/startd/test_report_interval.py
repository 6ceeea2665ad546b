"""A running job reports at least three times per lease, so a lease shorter than
STARTER_UPDATE_INTERVAL never restarts a healthy job."""

import classad
from startd.job_run import report_interval


def test_short_lease_shortens_the_report_interval():
    assert report_interval(classad.ClassAd({"JobLeaseDuration": 20}), 300.0) == 20 / 3


def test_long_or_missing_lease_keeps_the_usage_interval():
    assert report_interval(classad.ClassAd({"JobLeaseDuration": 2400}), 300.0) == 300.0
    assert report_interval(classad.ClassAd({}), 300.0) == 300.0


def test_tiny_lease_still_reports_no_faster_than_once_a_second():
    assert report_interval(classad.ClassAd({"JobLeaseDuration": 1}), 300.0) == 1.0
