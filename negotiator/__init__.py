"""The matchmaker: the negotiation cycle, the accountant that keeps usage and user
priorities (with accounting groups and quotas), autoclusters and matchmaking with a
literal pre-filter. GPU requests are fitted card by card with :mod:`gpushare`'s
model, the one the startd carves claims with, and machines are ranked by
NODE_PLACEMENT_POLICY; a pair the startd refused is held back for a while. There is
no preemption yet. The cycle's logic is pure code, tested without daemons.
"""
