"""Tests for transfer.urls against real servers on loopback: an HTTP server
in a thread and moto's standalone S3 server (see tests/shadow/conftest.py)."""

import socket
import urllib.request

import pytest

import classad
from tests.support.servers import _start_moto, _stop
from transfer.archive import PackStream, into_iwd, stream_of, unpack
from transfer.errors import S3CredentialsError, TransferLimitError, UrlTransferError
from transfer.plan import input_plan, output_plan
from transfer.resolve import resolve_outputs
from transfer.urls import (
    S3Location,
    S3Settings,
    fetch,
    fetch_inputs,
    parse_s3_url,
    presign,
    presign_inputs,
    s3_settings_from_job,
    upload,
    upload_all,
)


def job_ad(tmp_path, endpoint=None, **attrs):
    (tmp_path / "ak").write_text("AKIDTESTROOST\n")
    (tmp_path / "sk").write_text("secret-for-tests\n")
    base = {"ClusterId": 9, "ProcId": 0, "Iwd": str(tmp_path), "Cmd": "/bin/true",
            "TransferExecutable": False, "EC2AccessKeyId": "ak", "EC2SecretAccessKey": "sk",
            "AWSRegion": "us-east-1"}
    if endpoint:
        base["S3EndpointUrl"] = endpoint
    base.update(attrs)
    return classad.ClassAd(base)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("url,expected", [
    ("s3://bkt/a/b.txt", S3Location("bkt", "a/b.txt")),
    ("s3://bkt.s3.eu-west-2.amazonaws.com/k", S3Location("bkt", "k", region="eu-west-2")),
    ("s3://minio.example.org/bkt/k/x", S3Location("bkt", "k/x", "https://minio.example.org")),
])
def test_s3_url_forms(url, expected):
    """Plain, AWS-regional and other-host S3 URLs give bucket, key and endpoint."""
    assert parse_s3_url(url) == expected


def test_s3_url_without_key_is_refused():
    """A bucket alone (or a 'directory') cannot be transferred."""
    with pytest.raises(UrlTransferError, match="bucket and an object key"):
        parse_s3_url("s3://bkt/")


def test_credentials_come_from_files_under_iwd_and_stay_out_of_reprs(tmp_path):
    """Key files are read (relative to Iwd), stripped, and never printed."""
    settings = s3_settings_from_job(job_ad(tmp_path), endpoint_url="http://127.0.0.1:1")
    assert settings.access_key_id == "AKIDTESTROOST"
    assert settings.endpoint_url == "http://127.0.0.1:1" and settings.region == "us-east-1"
    assert "secret-for-tests" not in repr(settings) and "AKID" not in repr(settings)


def test_missing_credential_file_names_job_and_file(tmp_path):
    """A credential file that does not exist is an S3CredentialsError saying which."""
    ad = job_ad(tmp_path, EC2SecretAccessKey="nope")
    with pytest.raises(S3CredentialsError, match=r"job 9\.0: cannot read EC2SecretAccessKey.*nope"):
        s3_settings_from_job(ad)


def test_http_input_is_fetched_into_the_sandbox(tmp_path, http_root):
    """An http:// input lands in the sandbox under its file name."""
    root, base = http_root
    (root / "data.csv").write_text("a,b\n1,2\n")
    box = tmp_path / "box"
    box.mkdir()
    plan = input_plan(job_ad(tmp_path, TransferInput=f"{base}/data.csv"))
    assert fetch_inputs(plan, str(box)) == 8
    assert (box / "data.csv").read_text() == "a,b\n1,2\n"


def test_http_errors_say_what_the_server_answered(tmp_path, http_root):
    """A 404 and a refused connection are clear errors naming the URL and the job."""
    _, base = http_root
    plan = input_plan(job_ad(tmp_path, TransferInput=f"{base}/missing.bin"))
    with pytest.raises(UrlTransferError, match=r"job 9\.0: .*missing.bin.*HTTP 404") as caught:
        fetch_inputs(plan, str(tmp_path))
    assert caught.value.hold_code == 13
    with pytest.raises(UrlTransferError, match="cannot reach"):
        fetch(f"http://127.0.0.1:{closed_port()}/x", str(tmp_path / "x"), timeout=5)
    assert not (tmp_path / "missing.bin").exists()


def test_download_larger_than_limit_is_stopped(tmp_path, http_root):
    """max_bytes stops a download and leaves no partial file."""
    root, base = http_root
    (root / "big").write_bytes(b"x" * 100_000)
    with pytest.raises(TransferLimitError):
        fetch(f"{base}/big", str(tmp_path / "big"), max_bytes=1000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["www"]


def test_file_urls_fetch_and_upload(tmp_path):
    """file:// inputs are copied in; file:// outputs are written, parents created."""
    (tmp_path / "src.txt").write_text("local")
    assert fetch(f"file://{tmp_path}/src.txt", str(tmp_path / "got.txt")) == 5
    assert (tmp_path / "got.txt").read_text() == "local"
    upload(str(tmp_path / "src.txt"), f"file://{tmp_path}/out/deep/copy.txt")
    assert (tmp_path / "out" / "deep" / "copy.txt").read_text() == "local"
    with pytest.raises(UrlTransferError, match="No such file"):
        fetch(f"file://{tmp_path}/absent", str(tmp_path / "x"))


def test_s3_input_is_fetched_with_the_jobs_credentials(tmp_path, s3_endpoint, s3_client, bucket):
    """An s3:// input is downloaded through boto3 with the job's key files and endpoint."""
    s3_client.put_object(Bucket=bucket, Key="models/weights.bin", Body=b"\x00\x01" * 1000)
    ad = job_ad(tmp_path, s3_endpoint, TransferInput=f"s3://{bucket}/models/weights.bin")
    box = tmp_path / "box"
    box.mkdir()
    assert fetch_inputs(input_plan(ad), str(box), s3=s3_settings_from_job(ad)) == 2000
    assert (box / "weights.bin").read_bytes() == b"\x00\x01" * 1000


def test_s3_missing_bucket_and_key_are_named(tmp_path, s3_settings, bucket):
    """A missing bucket and a missing key each get their own clear message."""
    with pytest.raises(UrlTransferError, match="bucket 'no-such-bucket-roost' does not exist"):
        fetch("s3://no-such-bucket-roost/k", str(tmp_path / "k"), s3=s3_settings)
    with pytest.raises(UrlTransferError, match=f"no object 'absent' in bucket '{bucket}'"):
        fetch(f"s3://{bucket}/absent", str(tmp_path / "k"), s3=s3_settings)
    assert not (tmp_path / "k").exists()


def test_s3_url_without_credentials_is_refused(tmp_path):
    """An s3:// URL when the job gave no key files tells the user which commands to set."""
    with pytest.raises(S3CredentialsError, match="aws_access_key_id_file"):
        fetch("s3://b/k", str(tmp_path / "k"))


@pytest.fixture(scope="module")
def strict_s3():
    """A second moto server that checks credentials, so refusals are real."""
    process, endpoint = _start_moto({"INITIAL_NO_AUTH_ACTION_COUNT": "0"})
    yield endpoint
    _stop(process)


@pytest.mark.integration  # starts a moto server
def test_refused_credentials_say_which_files_to_check(tmp_path, strict_s3):
    """Keys the server does not know give S3CredentialsError pointing at the key files."""
    settings = S3Settings("AKIDUNKNOWN", "wrong", region="us-east-1", endpoint_url=strict_s3)
    with pytest.raises(S3CredentialsError, match="refused the job's credentials") as caught:
        fetch("s3://any-bucket/k", str(tmp_path / "k"), s3=settings)
    assert caught.value.hold_code == 13 and caught.value.hold_subcode == 13


def test_presigned_urls_need_no_credentials(tmp_path, s3_settings, s3_client, bucket):
    """Presigned GET and PUT URLs work through plain HTTP from a side without keys."""
    s3_client.put_object(Bucket=bucket, Key="in.txt", Body=b"presigned in")
    plan = presign_inputs(input_plan(job_ad(tmp_path, TransferInput=f"s3://{bucket}/in.txt")),
                          s3_settings)
    assert plan.urls[0].name == "in.txt" and plan.urls[0].url.startswith("http://127.0.0.1")
    box = tmp_path / "box"
    box.mkdir()
    fetch_inputs(plan, str(box))
    assert (box / "in.txt").read_bytes() == b"presigned in"
    (tmp_path / "out.txt").write_text("presigned out")
    put_url = presign(f"s3://{bucket}/out.txt", s3_settings, method="PUT")
    upload(str(tmp_path / "out.txt"), put_url)
    assert s3_client.get_object(Bucket=bucket, Key="out.txt")["Body"].read() == b"presigned out"


def test_output_destination_uploads_outputs_to_s3(tmp_path, s3_endpoint, s3_client, bucket):
    """With OutputDestination the outputs are staged and uploaded; stdout still comes home."""
    box, home, staging = tmp_path / "box", tmp_path / "home", tmp_path / "staging"
    for d in (box, home, staging):
        d.mkdir()
    (box / "result.txt").write_text("42")
    (box / "_condor_stdout").write_text("hello\n")
    ad = job_ad(home, s3_endpoint, TransferOutput="result.txt", Out="out.txt",
                OutputDestination=f"s3://{bucket}/run1/")
    plan = output_plan(ad)
    stats = unpack(stream_of(PackStream(resolve_outputs(plan, str(box)))), into_iwd(plan, str(staging)))
    assert upload_all(stats.uploads, s3=s3_settings_from_job(ad), job=plan.job) == 2
    assert s3_client.get_object(Bucket=bucket, Key="run1/result.txt")["Body"].read() == b"42"
    assert (home / "out.txt").read_text() == "hello\n"


def test_upload_to_missing_bucket_is_an_output_hold(tmp_path, s3_settings):
    """Uploading into a bucket that does not exist is a code-12 error naming the bucket."""
    (tmp_path / "f").write_text("x")
    with pytest.raises(UrlTransferError, match="bucket 'gone-bucket-roost' does not exist") as caught:
        upload_all([(str(tmp_path / "f"), "s3://gone-bucket-roost/f")], s3=s3_settings, job="9.0")
    assert caught.value.hold_code == 12


def test_presigned_url_is_fetchable_with_urllib_directly(s3_settings, s3_client, bucket):
    """The presigned URL is an ordinary http URL any client can GET."""
    s3_client.put_object(Bucket=bucket, Key="k", Body=b"v")
    with urllib.request.urlopen(presign(f"s3://{bucket}/k", s3_settings), timeout=10) as response:
        assert response.read() == b"v"
