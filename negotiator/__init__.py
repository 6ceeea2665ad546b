"""The matchmaker: the negotiation cycle, the accountant that keeps usage and user
priorities (with accounting groups and quotas), and matchmaking of the schedds' autoclusters with a
literal pre-filter. GPU requests are fitted card by card with :mod:`gpushare`'s
model, the one the startd carves claims with, and machines are ranked by
NODE_PLACEMENT_POLICY; a pair the startd refused is held back for a while.
Preemption (PREEMPTION_REQUIREMENTS/RANK, startd RANK, partitionable-slot victims),
gangs, concurrency limits and group limits are decided here too, and jobs of other
pools' schedds are negotiated when they flock in. The cycle's logic is pure code,
tested without daemons.
"""
