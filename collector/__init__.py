"""The collector daemon: an in-memory store of ads by type, with updates,
invalidations, expiry after each ad's lifetime, and streaming constraint queries
with projections.
"""
