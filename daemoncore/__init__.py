"""What every Roost daemon stands on: HTCondor's configuration language, the wire
protocol (HTTP and JSON over Twisted), security (pool signing key, tokens and
authorization levels), the daemon base service that advertises itself and serves
``/metrics``, and the master that starts and supervises a pool.
"""
