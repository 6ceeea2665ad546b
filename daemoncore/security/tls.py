"""The pool's certificate authority: a CA key and self-signed certificate kept beside
the pool's signing key, host certificates it signs for each host's DNS names and IP
addresses, and the CA certificate's SHA-256 fingerprint that ``roost pool join``
checks before it trusts a central manager.

The API, for the CLI and ``roost pool join``::

    authority = create_authority(directory)          # pool_ca.crt + pool_ca.key (0600); never overwrites
    authority = load_authority(directory)
    host = issue_host_certificate(authority, ["exec1.example.org"], ["198.18.0.3"])
    write_host_certificate(host, cert_path, key_path)  # key 0600
    fingerprint(authority.certificate_pem())          # 64 lower-case hex digits

Making certificates is pure (:func:`make_authority`, :func:`issue_host_certificate`
take the time as an argument); only the ``create_``/``load_``/``write_`` functions touch
files. Keys are ECDSA P-256: small, and fast to handshake with.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
import stat
from collections.abc import Iterable

from attrs import field, frozen
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from daemoncore.security.tls_errors import AuthorityExistsError, CertificateError

#: File names of the CA certificate and key in the pool's key directory.
CA_CERT_FILE = "pool_ca.crt"
CA_KEY_FILE = "pool_ca.key"
CA_NAME = "Roost pool CA"
CA_LIFETIME = datetime.timedelta(days=3650)
HOST_LIFETIME = datetime.timedelta(days=825)
#: Certificates start this long before they are made, so a host whose clock is a
#: little behind the CA's still accepts them.
CLOCK_SKEW = datetime.timedelta(hours=1)
KEY_FILE_MODE = 0o600
CERT_FILE_MODE = 0o644


@frozen
class Authority:
    """A pool CA: its certificate and its private key."""

    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey = field(repr=False)

    def certificate_pem(self) -> bytes:
        """The CA certificate in PEM form (what clients trust and joiners check)."""
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def key_pem(self) -> bytes:
        """The CA key in unencrypted PKCS#8 PEM form."""
        return _key_pem(self.key)

    @property
    def fingerprint(self) -> str:
        """The SHA-256 fingerprint of the CA certificate, as :func:`fingerprint`."""
        return self.certificate.fingerprint(hashes.SHA256()).hex()


@frozen
class HostCertificate:
    """A host's certificate and key, PEM; unpacks as ``cert_pem, key_pem``."""

    certificate_pem: bytes
    key_pem: bytes = field(repr=False)

    def __iter__(self):
        return iter((self.certificate_pem, self.key_pem))


def _now(now: datetime.datetime | None) -> datetime.datetime:
    return now if now is not None else datetime.datetime.now(datetime.timezone.utc)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def make_authority(name: str | None = None, now: datetime.datetime | None = None,
                   lifetime: datetime.timedelta = CA_LIFETIME) -> Authority:
    """A new CA named ``name`` (its certificate's common name; default ``Roost pool
    CA`` and 8 random hex digits, so two pools' CAs read differently in an error),
    valid from ``now`` (less :data:`CLOCK_SKEW`) for ``lifetime``; nothing is written."""
    now = _now(now)
    name = name or f"{CA_NAME} {secrets.token_hex(4)}"
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    public = key.public_key()
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject).issuer_name(subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW).not_valid_after(now + lifetime)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    return Authority(certificate, key)


def _ip_addresses(addresses: Iterable[str]) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    parsed = []
    for text in addresses:
        try:
            parsed.append(ipaddress.ip_address(str(text).strip().strip("[]")))
        except ValueError:
            raise CertificateError(f"{text!r} is not an IP address (e.g. 198.18.0.2 or ::1)") from None
    return parsed


def _dns_names(names: Iterable[str]) -> list[str]:
    cleaned = []
    for name in names:
        name = str(name).strip().rstrip(".").lower()
        if not name or any(c.isspace() or c in "/:<>?@" for c in name) or len(name) > 253:
            raise CertificateError(f"{name!r} is not a host name (e.g. exec1.example.org)")
        cleaned.append(name)
    return cleaned


def issue_host_certificate(authority: Authority, names: Iterable[str], addresses: Iterable[str] = (),
                           now: datetime.datetime | None = None,
                           lifetime: datetime.timedelta = HOST_LIFETIME) -> HostCertificate:
    """A certificate and fresh key for a host known by DNS ``names`` and IP
    ``addresses`` (both become subjectAltNames, which clients check), signed by
    ``authority``; nothing is written.

    Raises:
        CertificateError: no name and no address, a name that is not a host name, or
            an address that is not an IP address.
    """
    dns = _dns_names(names)
    ips = _ip_addresses(addresses)
    if not dns and not ips:
        raise CertificateError("a host certificate needs at least one host name or IP address")
    now = _now(now)
    key = ec.generate_private_key(ec.SECP256R1())
    common_name = dns[0] if dns else str(ips[0])
    alt_names = [x509.DNSName(name) for name in dns] + [x509.IPAddress(ip) for ip in ips]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(authority.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW).not_valid_after(now + lifetime)
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(authority.key.public_key()),
                       critical=False)
        .sign(authority.key, hashes.SHA256())
    )
    return HostCertificate(certificate.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def fingerprint(cert_pem: bytes) -> str:
    """The SHA-256 fingerprint of the (first) certificate in ``cert_pem``: 64
    lower-case hex digits, no separators.

    Raises:
        CertificateError: ``cert_pem`` holds no PEM certificate.
    """
    return parse_certificate(cert_pem).fingerprint(hashes.SHA256()).hex()


def same_fingerprint(expected: str, cert_pem: bytes) -> bool:
    """Whether ``cert_pem``'s fingerprint is ``expected``, written in any case, with or
    without ``:`` separators or a ``sha256:`` prefix (as ``openssl x509 -fingerprint`` prints)."""
    wanted = expected.strip().lower().removeprefix("sha256:").removeprefix("sha256 fingerprint=").replace(":", "")
    return wanted == fingerprint(cert_pem)


def parse_certificate(cert_pem: bytes, source: str = "the text") -> x509.Certificate:
    """The first certificate in ``cert_pem``.

    Raises:
        CertificateError: ``cert_pem`` holds no PEM certificate (``source`` says where it came from).
    """
    try:
        return x509.load_pem_x509_certificate(cert_pem)
    except ValueError as exc:
        raise CertificateError(f"{source} holds no PEM certificate ({exc})") from None


def signed_by(certificate: x509.Certificate, authority_certificate: x509.Certificate) -> bool:
    """Whether ``authority_certificate``'s key signed ``certificate``."""
    if certificate.issuer != authority_certificate.subject:
        return False
    try:
        certificate.verify_directly_issued_by(authority_certificate)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def subject_names(certificate: x509.Certificate) -> list[str]:
    """The DNS names and IP addresses ``certificate`` is for (its subjectAltNames, else
    its common name), as text."""
    try:
        alt = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return [attr.value for attr in certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    return alt.get_values_for_type(x509.DNSName) + [str(ip) for ip in alt.get_values_for_type(x509.IPAddress)]


def issuer_text(certificate: x509.Certificate) -> str:
    """The issuer of ``certificate`` as a person reads it (``CN=Roost pool CA``)."""
    return certificate.issuer.rfc4514_string() or "an issuer with no name"


# --- files ---

def authority_paths(directory: str) -> tuple[str, str]:
    """Where the CA certificate and key of the pool whose keys are in ``directory`` live."""
    return os.path.join(directory, CA_CERT_FILE), os.path.join(directory, CA_KEY_FILE)


def create_authority(directory: str, name: str | None = None, now: datetime.datetime | None = None) -> Authority:
    """Make a CA and write it to ``directory`` (created 0700 if missing): the
    certificate ``pool_ca.crt`` (0644) and the key ``pool_ca.key`` (0600).

    Raises:
        AuthorityExistsError: either file is already there (nothing is overwritten).
        CertificateError: the files cannot be written.
    """
    cert_path, key_path = authority_paths(directory)
    for path in (key_path, cert_path):
        if os.path.lexists(path):
            raise AuthorityExistsError(f"the pool CA {path} already exists: use it, or remove both "
                                       f"{CA_CERT_FILE} and {CA_KEY_FILE} first (every host certificate it "
                                       f"signed stops being trusted)")
    authority = make_authority(name, now)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise CertificateError(f"cannot make {directory}: {exc.strerror or exc}") from None
    _write_new(key_path, authority.key_pem(), KEY_FILE_MODE)
    try:
        _write_new(cert_path, authority.certificate_pem(), CERT_FILE_MODE)
    except CertificateError:
        os.remove(key_path)
        raise
    return authority


def load_authority(directory: str) -> Authority:
    """The CA kept in ``directory``.

    Raises:
        CertificateError: a file is missing or unreadable, the key is readable by others,
            or the key does not belong to the certificate.
    """
    cert_path, key_path = authority_paths(directory)
    certificate = load_certificate_file(cert_path)
    key = load_private_key_file(key_path)
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.public_key() != certificate.public_key():
        raise CertificateError(f"the key {key_path} does not belong to the CA certificate {cert_path}")
    return Authority(certificate, key)


def write_host_certificate(host: HostCertificate, cert_path: str, key_path: str) -> None:
    """Write a host's certificate (0644) and key (0600), each atomically, replacing
    earlier ones.

    Raises:
        CertificateError: a file cannot be written.
    """
    _write_replacing(key_path, host.key_pem, KEY_FILE_MODE)
    _write_replacing(cert_path, host.certificate_pem, CERT_FILE_MODE)


def load_certificate_file(path: str) -> x509.Certificate:
    """The certificate in the PEM file ``path``.

    Raises:
        CertificateError: missing, unreadable or not a PEM certificate.
    """
    return parse_certificate(_read(path, "certificate"), f"certificate file {path}")


def load_private_key_file(path: str):
    """The private key in the PEM file ``path``, which only its owner may read.

    Raises:
        CertificateError: missing, unreadable, readable or writable by group or others,
            or not an unencrypted PEM private key.
    """
    data = _read(path, "key", private=True)
    try:
        return serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise CertificateError(f"key file {path} holds no unencrypted PEM private key ({exc})") from None


def _read(path: str, what: str, private: bool = False) -> bytes:
    try:
        with open(path, "rb") as handle:
            if private:
                mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
                if mode & 0o077:
                    raise CertificateError(f"{what} file {path} has mode {mode:04o}, so others can read or "
                                           f"change it: run 'chmod 600 {path}'")
            return handle.read()
    except FileNotFoundError:
        raise CertificateError(f"{what} file {path} does not exist") from None
    except OSError as exc:
        raise CertificateError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None


def _write_temporary(path: str, data: bytes, mode: int) -> str:
    """Write ``data`` to a new file beside ``path`` with ``mode`` from its creation on; its name."""
    partial = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
        if os.path.lexists(partial):
            os.remove(partial)
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
    except OSError as exc:
        raise CertificateError(f"cannot write {path}: {exc.strerror or exc}") from None
    return partial


def _write_new(path: str, data: bytes, mode: int) -> None:
    """Write ``path`` whole or not at all, failing if it appeared meanwhile."""
    partial = _write_temporary(path, data, mode)
    try:
        os.link(partial, path)
    except FileExistsError:
        raise AuthorityExistsError(f"{path} appeared while it was being written: another command made it") from None
    except OSError as exc:
        raise CertificateError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        os.remove(partial)


def _write_replacing(path: str, data: bytes, mode: int) -> None:
    partial = _write_temporary(path, data, mode)
    try:
        os.replace(partial, path)
    except OSError as exc:
        os.remove(partial)
        raise CertificateError(f"cannot write {path}: {exc.strerror or exc}") from None
