"""The negotiator's Prometheus metrics: each cycle's duration, and the matches made,
accepted and rejected (made but refused by the schedd or never delivered), counted
over every cycle since the negotiator started."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

#: Cycle durations from a few milliseconds (an idle pool) to minutes (a large one).
CYCLE_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300)


class NegotiatorMetrics:
    """The negotiator's metrics in ``registry``, fed one cycle report at a time. Mutable: counters count."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.cycle_seconds = Histogram("roost_negotiator_cycle_duration_seconds", "Negotiation cycle time",
                                       buckets=CYCLE_BUCKETS, registry=registry)
        self.last_cycle_seconds = Gauge("roost_negotiator_last_cycle_duration_seconds",
                                        "The last negotiation cycle's time", registry=registry)
        self.matches = Counter("roost_negotiator_matches", "Matches made", registry=registry)
        self.accepted = Counter("roost_negotiator_matches_accepted", "Matches the schedd accepted",
                                registry=registry)
        self.rejections = Counter("roost_negotiator_rejections",
                                  "Matches made but refused by the schedd or not delivered", registry=registry)
        self.problems = Counter("roost_negotiator_cycle_problems", "Problems a cycle logged", registry=registry)
        self.slots = Gauge("roost_negotiator_last_cycle_slots", "Slots the last cycle considered",
                           registry=registry)
        self.submitters = Gauge("roost_negotiator_last_cycle_submitters", "Submitters the last cycle served",
                                registry=registry)

    def observe(self, report) -> None:
        """Count one cycle's ``CycleReport``."""
        self.cycle_seconds.observe(max(report.duration, 0.0))
        self.last_cycle_seconds.set(max(report.duration, 0.0))
        self.matches.inc(report.matches)
        self.accepted.inc(report.matches_accepted)
        self.rejections.inc(max(report.matches - report.matches_accepted, 0))
        self.problems.inc(len(report.problems))
        self.slots.set(report.slots)
        self.submitters.set(report.submitters)
