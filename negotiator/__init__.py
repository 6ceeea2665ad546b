"""The matchmaker: the negotiation cycle, the accountant that keeps usage and user
priorities (with accounting groups and quotas), autoclusters and matchmaking with a
literal pre-filter, and a model of GPU shares (``gpushare``) that only its unit tests
use so far. There is no preemption yet. The cycle's logic is pure code, tested
without daemons.
"""
