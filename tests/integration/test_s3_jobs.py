"""A job whose input comes from S3 and whose output goes back to S3, on a real pool
against a real S3-compatible server (moto's standalone server). The execute side
never sees the keys: the schedd hands the starter presigned URLs."""

from __future__ import annotations

import pytest

from tests.integration.conftest import isolated_env, roost
from tests.support.servers import bucket, s3_client, s3_endpoint, s3_settings  # noqa: F401  (fixtures)

SUBMIT = """executable = /bin/sh
arguments = "-c 'wc -w < words.txt > count.txt'"
transfer_input_files = s3://{bucket}/in/words.txt
transfer_output_files = count.txt
output_destination = s3://{bucket}/out/
aws_access_key_id_file = access.key
aws_secret_access_key_file = secret.key
aws_region = us-east-1
+S3EndpointUrl = "{endpoint}"
should_transfer_files = YES
log = s3.log
queue
"""


@pytest.fixture(scope="module")
def pool_env(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    env = isolated_env(home)
    try:
        roost(env, "pool", "up", "--dir", str(home / "pool"))
        yield env
    finally:
        roost(env, "pool", "down", "--dir", str(home / "pool"), check=False)


def test_s3_input_and_output_travel_through_the_pool(pool_env, tmp_path, s3_client, s3_settings, bucket):
    s3_client.put_object(Bucket=bucket, Key="in/words.txt", Body=b"alpha beta gamma delta\n")
    (tmp_path / "access.key").write_text(s3_settings.access_key_id)
    (tmp_path / "secret.key").write_text(s3_settings.secret_access_key)
    sub = tmp_path / "s3.sub"
    sub.write_text(SUBMIT.format(bucket=bucket, endpoint=s3_settings.endpoint_url))
    done = roost(pool_env, "run", str(sub), "--timeout", "60", timeout=120)
    assert "1 of 1 job(s) succeeded" in done.stdout
    body = s3_client.get_object(Bucket=bucket, Key="out/count.txt")["Body"].read()
    assert body.strip() == b"4"


def test_missing_s3_credentials_hold_the_job_with_the_reason(pool_env, tmp_path, s3_settings, bucket):
    sub = tmp_path / "nokeys.sub"
    sub.write_text(SUBMIT.format(bucket=bucket, endpoint=s3_settings.endpoint_url))
    done = roost(pool_env, "run", str(sub), "--timeout", "60", check=False, timeout=120)
    assert done.returncode == 1
    assert "held" in done.stdout and "access.key" in done.stdout
