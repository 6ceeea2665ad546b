"""The matchmaker: the negotiation cycle, the accountant that keeps usage and user
priorities (with accounting groups and quotas), preemption, and fitting jobs' GPU
shares onto cards. The cycle's logic is pure code, tested without daemons.
"""
