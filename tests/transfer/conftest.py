"""Transfer tests run against a real S3 server and a real HTTP server on loopback."""

from tests.support.servers import bucket, http_root, s3_client, s3_endpoint, s3_settings  # noqa: F401  (fixtures)
