"""The wire protocol: HTTP/1.1 + JSON routes under ``/v1/`` on ``twisted.web``,
NDJSON streaming, JSON errors, and the async (treq) and blocking clients that share
one ``Route`` description with the server."""
