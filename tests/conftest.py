"""Test-wide settings: the ClassAd conformance cases assume UTC as local time."""

import os
import time

os.environ["TZ"] = "UTC"
time.tzset()
