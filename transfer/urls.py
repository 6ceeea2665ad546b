"""URL transfers: fetching ``http``, ``https``, ``file`` and ``s3`` inputs into a
sandbox, uploading outputs to ``s3``, ``file`` (and presigned ``http(s)``) URLs,
and presigning ``s3`` URLs on the submit side so credentials never leave it.

Everything here blocks; a daemon runs it in a thread (``deferToThread``). S3 goes
through boto3 with the job's credential files (``EC2AccessKeyId`` and
``EC2SecretAccessKey`` name files holding the keys), ``AWSRegion``, and an endpoint
override for non-AWS services: the job attribute ``S3EndpointUrl`` or the config
knob ``S3_ENDPOINT_URL``.
"""

from __future__ import annotations

import errno
import os
import re
import threading
import urllib.error
import urllib.request
from functools import lru_cache
from typing import BinaryIO, Iterable
from urllib.parse import unquote, urlsplit

import attrs
from attrs import field, frozen

import classad
from transfer.archive import PART_SUFFIX
from transfer.errors import S3CredentialsError, TransferError, TransferLimitError, UrlTransferError
from transfer.plan import InputPlan, UrlInput, job_name, string_attr, url_scheme

CHUNK_SIZE = 1 << 16
DEFAULT_TIMEOUT = 60.0
_AWS_HOST = re.compile(r"^(?P<bucket>[^/]+)\.s3[.-](?P<region>[a-z0-9-]+)\.amazonaws\.com$")
_REFUSED = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken",
            "ExpiredToken", "InvalidClientTokenId", "403"}
_MISSING_KEY = {"NoSuchKey", "404", "NotFound"}


@frozen
class S3Settings:
    """Credentials and addressing for one job's S3 URLs; keys never show in reprs."""

    access_key_id: str = field(repr=False)
    secret_access_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)
    region: str | None = None
    endpoint_url: str | None = None


@frozen
class S3Location:
    """Bucket and key of an ``s3://`` URL, with the endpoint or region its host names."""

    bucket: str
    key: str
    endpoint_url: str | None = None
    region: str | None = None


def s3_settings_from_job(ad: classad.ClassAd, *, endpoint_url: str | None = None) -> S3Settings:
    """Read the job's S3 credential files (relative names are under ``Iwd``).

    Args:
        ad: the job ad.
        endpoint_url: the ``S3_ENDPOINT_URL`` config value, used when the job has no
            ``S3EndpointUrl`` of its own.

    Raises:
        S3CredentialsError: an attribute is missing or a file cannot be read or is empty.
    """
    job = job_name(ad)
    iwd = string_attr(ad, "Iwd") or ""
    access = _read_secret(job, iwd, string_attr(ad, "EC2AccessKeyId"), "EC2AccessKeyId (aws_access_key_id_file)")
    secret = _read_secret(job, iwd, string_attr(ad, "EC2SecretAccessKey"),
                          "EC2SecretAccessKey (aws_secret_access_key_file)")
    token_file = string_attr(ad, "EC2SessionToken")
    token = _read_secret(job, iwd, token_file, "EC2SessionToken") if token_file else None
    return S3Settings(access, secret, token, region=string_attr(ad, "AWSRegion"),
                      endpoint_url=string_attr(ad, "S3EndpointUrl") or endpoint_url)


def parse_s3_url(url: str) -> S3Location:
    """Bucket and key of ``s3://bucket/key``, ``s3://bucket.s3.<region>.amazonaws.com/key``
    or ``s3://<host.with.dot>/bucket/key`` (another S3 service, reached over https).

    Raises:
        UrlTransferError: the URL names no bucket or no key.
    """
    parts = urlsplit(url)
    host, path = parts.netloc, unquote(parts.path).lstrip("/")
    aws = _AWS_HOST.match(host)
    endpoint = region = None
    if aws:
        bucket, key, region = aws["bucket"], path, aws["region"]
    elif "." in host:
        endpoint = f"https://{host}"
        bucket, _, key = path.partition("/")
    else:
        bucket, key = host, path
    if not bucket or not key or key.endswith("/"):
        raise UrlTransferError(f"S3 URL {url!r} must name a bucket and an object key "
                               "(whole buckets or directories cannot be transferred)")
    return S3Location(bucket, key, endpoint, region)


def fetch(url: str, destination: str, *, s3: S3Settings | None = None,
          timeout: float = DEFAULT_TIMEOUT, max_bytes: int | None = None) -> int:
    """Download ``url`` to the file ``destination`` (written under a temporary name,
    renamed when complete) and return its size in bytes.

    Raises:
        UrlTransferError: the scheme is unsupported, the server or file refused, or
            the object or bucket is missing.
        S3CredentialsError: an s3 URL without settings, or credentials refused.
        TransferLimitError: the download is larger than ``max_bytes``.
    """
    scheme = url_scheme(url)
    with _partial_file(destination) as out:
        if scheme in ("http", "https"):
            _fetch_http(url, out, timeout, max_bytes)
        elif scheme == "file":
            with _open_local(url, "r") as source:
                _copy(url, source, out, max_bytes)
        elif scheme == "s3":
            _fetch_s3(url, out, _need_settings(url, s3), max_bytes)
        else:
            raise UrlTransferError(f"cannot fetch {url!r}: scheme {scheme!r} is not supported "
                                   "(http, https, file and s3 are)")
        return out.tell()


def fetch_inputs(plan: InputPlan, sandbox: str, *, s3: S3Settings | None = None,
                 timeout: float = DEFAULT_TIMEOUT, max_bytes: int | None = None) -> int:
    """Fetch every URL input of ``plan`` into ``sandbox`` under its file name; returns
    the total bytes. Errors name the job.

    Raises:
        UrlTransferError, S3CredentialsError, TransferLimitError: as ``fetch``.
    """
    total = 0
    for item in plan.urls:
        remaining = None if max_bytes is None else max_bytes - total
        try:
            total += fetch(item.url, os.path.join(sandbox, item.name), s3=s3,
                           timeout=timeout, max_bytes=remaining)
        except (UrlTransferError, TransferLimitError) as exc:
            raise type(exc)(f"job {plan.job}: {exc}", hold_code=exc.hold_code,
                            hold_subcode=exc.hold_subcode) from None
    return total


def presign(url: str, s3: S3Settings, *, method: str = "GET", expires: int = 3600) -> str:
    """An ``http(s)`` URL that lets its holder GET (or PUT) one S3 object for
    ``expires`` seconds without credentials; other URLs come back unchanged."""
    if url_scheme(url) != "s3":
        return url
    where = parse_s3_url(url)
    operation = "get_object" if method == "GET" else "put_object"
    return _client(_effective(s3, where)).generate_presigned_url(
        operation, Params={"Bucket": where.bucket, "Key": where.key}, ExpiresIn=expires)


def presign_inputs(plan: InputPlan, s3: S3Settings, *, expires: int = 3600) -> InputPlan:
    """``plan`` with every ``s3://`` input replaced by a presigned URL (same file name),
    for an execute side that holds no credentials."""
    urls = tuple(UrlInput(presign(u.url, s3, expires=expires), u.name) for u in plan.urls)
    return attrs.evolve(plan, urls=urls)


def upload(path: str, url: str, *, s3: S3Settings | None = None,
           timeout: float = DEFAULT_TIMEOUT) -> int:
    """Send the file ``path`` to ``url`` (``s3://``, ``file://``, or a presigned
    ``http(s)`` PUT URL) and return its size in bytes.

    Raises:
        UrlTransferError: the destination refused or is unreachable, or the bucket is missing.
        S3CredentialsError: an s3 URL without settings, or credentials refused.
    """
    scheme = url_scheme(url)
    size = os.path.getsize(path)
    with open(path, "rb") as source:
        if scheme == "s3":
            _upload_s3(url, source, size, _need_settings(url, s3))
        elif scheme == "file":
            with _partial_file(_local_path(url), make_parents=True) as out:
                _copy(url, source, out, None)
        elif scheme in ("http", "https"):
            request = urllib.request.Request(url, data=source, method="PUT",
                                             headers={"Content-Length": str(size),
                                                      "Content-Type": "application/octet-stream"})
            with _http_errors(url):
                urllib.request.urlopen(request, timeout=timeout).close()
        else:
            raise UrlTransferError(f"cannot upload to {url!r}: scheme {scheme!r} is not supported "
                                   "(s3, file, http and https are)")
    return size


def upload_all(uploads: Iterable[tuple[str, str]], *, s3: S3Settings | None = None,
               job: str = "?", timeout: float = DEFAULT_TIMEOUT) -> int:
    """Upload each (path, url) pair, such as ``TransferStats.uploads``; returns total bytes.

    Raises:
        UrlTransferError, S3CredentialsError: as ``upload``, as output-transfer holds.
    """
    total = 0
    for path, url in uploads:
        try:
            total += upload(path, url, s3=s3, timeout=timeout)
        except UrlTransferError as exc:
            raise type(exc)(f"job {job}: {exc}", hold_code=12, hold_subcode=exc.hold_subcode) from None
    return total


def _fetch_http(url: str, out: BinaryIO, timeout: float, max_bytes: int | None) -> None:
    with _http_errors(url):
        with urllib.request.urlopen(url, timeout=timeout) as response:
            _copy(url, response, out, max_bytes)


class _http_errors:
    """Turns urllib's failures into one clear ``UrlTransferError``."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, traceback) -> bool:
        if isinstance(exc, urllib.error.HTTPError):
            raise UrlTransferError(f"{self.url!r}: server answered HTTP {exc.code} {exc.reason}",
                                   hold_subcode=errno.ENOENT if exc.code == 404 else errno.EIO) from None
        if isinstance(exc, (urllib.error.URLError, ConnectionError, TimeoutError)):
            reason = getattr(exc, "reason", exc)
            raise UrlTransferError(f"cannot reach {self.url!r}: {reason}") from None
        return False


def _copy(url: str, source: BinaryIO, out: BinaryIO, max_bytes: int | None) -> None:
    copied = 0
    while chunk := source.read(CHUNK_SIZE):
        copied += len(chunk)
        if max_bytes is not None and copied > max_bytes:
            raise TransferLimitError(f"{url!r} is larger than the limit of {max_bytes} bytes")
        out.write(chunk)


def _local_path(url: str) -> str:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise UrlTransferError(f"file URL {url!r} names host {parts.netloc!r}; only local files work")
    return unquote(parts.path)


def _open_local(url: str, mode: str) -> BinaryIO:
    path = _local_path(url)
    try:
        return open(path, mode + "b")
    except OSError as exc:
        raise UrlTransferError(f"cannot read {url!r}: {exc.strerror}", hold_subcode=exc.errno) from None


class _partial_file:
    """A file opened under a temporary name beside ``path`` and renamed onto it only
    when the block finishes without an error."""

    def __init__(self, path: str, *, make_parents: bool = False) -> None:
        self.path = path
        self.temporary = os.path.join(os.path.dirname(path) or ".",
                                      f".{os.path.basename(path)}{PART_SUFFIX}")
        self.make_parents = make_parents

    def __enter__(self) -> BinaryIO:
        try:
            if self.make_parents:
                os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            fd = os.open(self.temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise UrlTransferError(f"cannot write {self.path!r}: {exc.strerror}",
                                   hold_subcode=exc.errno) from None
        self.handle = os.fdopen(fd, "wb")
        return self.handle

    def __exit__(self, kind, exc, traceback) -> bool:
        self.handle.close()
        if exc is None:
            os.replace(self.temporary, self.path)
        elif os.path.lexists(self.temporary):
            os.unlink(self.temporary)
        return False


def _need_settings(url: str, s3: S3Settings | None) -> S3Settings:
    if s3 is None:
        raise S3CredentialsError(
            f"{url!r} is an S3 URL but the job gives no credentials; set "
            "aws_access_key_id_file and aws_secret_access_key_file in the submit file")
    return s3


def _effective(s3: S3Settings, where: S3Location) -> S3Settings:
    return attrs.evolve(s3, region=where.region or s3.region,
                        endpoint_url=where.endpoint_url or s3.endpoint_url)


_client_lock = threading.Lock()


@lru_cache(maxsize=32)
def _client(settings: S3Settings):
    """One boto3 S3 client per distinct settings (clients are thread-safe, creating
    them is slow and their sessions are not)."""
    import boto3
    from botocore.config import Config

    config = Config(s3={"addressing_style": "path"} if settings.endpoint_url else {},
                    signature_version="s3v4",
                    retries={"max_attempts": 2}, connect_timeout=10, read_timeout=DEFAULT_TIMEOUT)
    with _client_lock:
        session = boto3.session.Session()
        return session.client(
            "s3", aws_access_key_id=settings.access_key_id,
            aws_secret_access_key=settings.secret_access_key,
            aws_session_token=settings.session_token,
            region_name=settings.region or "us-east-1",
            endpoint_url=settings.endpoint_url, config=config)


def _fetch_s3(url: str, out: BinaryIO, s3: S3Settings, max_bytes: int | None) -> None:
    where = parse_s3_url(url)
    settings = _effective(s3, where)
    with _s3_errors(url, where, settings):
        response = _client(settings).get_object(Bucket=where.bucket, Key=where.key)
        if max_bytes is not None and response["ContentLength"] > max_bytes:
            raise TransferLimitError(f"{url!r} is larger than the limit of {max_bytes} bytes")
        _copy(url, response["Body"], out, max_bytes)


def _upload_s3(url: str, source: BinaryIO, size: int, s3: S3Settings) -> None:
    where = parse_s3_url(url)
    settings = _effective(s3, where)
    with _s3_errors(url, where, settings):
        _client(settings).put_object(Bucket=where.bucket, Key=where.key, Body=source,
                                     ContentLength=size)


class _s3_errors:
    """Turns botocore's failures into errors that say which bucket, key or
    credential is at fault."""

    def __init__(self, url: str, where: S3Location, settings: S3Settings) -> None:
        self.url, self.where, self.settings = url, where, settings

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, traceback) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        if exc is None or isinstance(exc, (UrlTransferError, TransferLimitError)):
            return False
        endpoint = self.settings.endpoint_url or "AWS"
        if isinstance(exc, ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code == "NoSuchBucket":
                raise UrlTransferError(
                    f"{self.url!r}: bucket {self.where.bucket!r} does not exist at {endpoint}",
                    hold_subcode=errno.ENOENT) from None
            if code in _MISSING_KEY:
                raise UrlTransferError(
                    f"{self.url!r}: no object {self.where.key!r} in bucket {self.where.bucket!r}",
                    hold_subcode=errno.ENOENT) from None
            if code in _REFUSED:
                raise S3CredentialsError(
                    f"{self.url!r}: {endpoint} refused the job's credentials ({code}); check the "
                    "files named by aws_access_key_id_file and aws_secret_access_key_file") from None
            raise UrlTransferError(f"{self.url!r}: S3 error {code}: {exc}") from None
        if isinstance(exc, NoCredentialsError):
            raise S3CredentialsError(f"{self.url!r}: no S3 credentials available") from None
        if isinstance(exc, BotoCoreError):
            raise UrlTransferError(f"{self.url!r}: cannot talk to S3 at {endpoint}: {exc}") from None
        return False


def _read_secret(job: str, iwd: str, name: str | None, what: str) -> str:
    if not name:
        raise S3CredentialsError(f"job {job} uses S3 URLs but has no {what}")
    path = name if os.path.isabs(name) or not iwd else os.path.join(iwd, name)
    try:
        with open(path, encoding="utf-8") as handle:
            value = handle.read().strip()
    except OSError as exc:
        raise S3CredentialsError(f"job {job}: cannot read {what} file {path!r}: {exc.strerror}",
                                 hold_subcode=exc.errno or errno.EIO) from None
    if not value:
        raise S3CredentialsError(f"job {job}: {what} file {path!r} is empty")
    return value


def close_clients() -> None:
    """Forget cached S3 clients (after credentials change, or in tests)."""
    _client.cache_clear()


__all__ = [
    "S3Settings", "S3Location", "s3_settings_from_job", "with_presigned_inputs", "parse_s3_url", "fetch", "fetch_inputs",
    "presign", "presign_inputs", "upload", "upload_all", "close_clients",
]


def with_presigned_inputs(ad: classad.ClassAd, *, endpoint_url: str | None = None) -> classad.ClassAd:
    """A copy of the job ad for the execute side: every ``s3://`` entry of
    ``TransferInput`` replaced by a presigned URL, so the starter fetches it without
    ever holding the job's keys. Unreadable credentials leave the ad as it is: the
    shadow's ``send_input`` then holds the job with the reason."""
    entries = [e.strip() for e in (string_attr(ad, "TransferInput") or "").split(",") if e.strip()]
    if not any(url_scheme(e) == "s3" for e in entries):
        return ad
    try:
        s3 = s3_settings_from_job(ad, endpoint_url=endpoint_url)
        presigned = [presign(e, s3) for e in entries]
    except TransferError:
        return ad
    copy = ad.copy()
    copy["TransferInput"] = ",".join(presigned)
    return copy
