"""Roost's web site: a read-only view of the pool (machines, GPUs, the queue, fair
share, flocking) served by the ``WEB`` daemon from the daemons' own REST routes, as
server-rendered HTML with a JSON twin of every page."""
