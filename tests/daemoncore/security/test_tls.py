"""The pool CA: made once and never overwritten, keys 0600, host certificates signed
by it that carry the host's names and addresses, fingerprints a joiner can compare."""

from __future__ import annotations

import datetime
import ipaddress
import os
import stat

import pytest
from cryptography import x509

from daemoncore.security.tls import (
    CA_CERT_FILE,
    CA_KEY_FILE,
    HostCertificate,
    create_authority,
    fingerprint,
    issue_host_certificate,
    load_authority,
    load_private_key_file,
    make_authority,
    parse_certificate,
    same_fingerprint,
    signed_by,
    subject_names,
    write_host_certificate,
)
from daemoncore.security.tls_errors import AuthorityExistsError, CertificateError

NOW = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_create_authority_writes_a_0600_key_and_a_self_signed_ca(tmp_path):
    """roost pool ca create: the key is 0600, the certificate is a CA that signed itself."""
    authority = create_authority(str(tmp_path / "keys"))
    assert _mode(tmp_path / "keys" / CA_KEY_FILE) == 0o600
    assert _mode(tmp_path / "keys") == 0o700
    cert = parse_certificate((tmp_path / "keys" / CA_CERT_FILE).read_bytes())
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert signed_by(cert, cert)
    assert cert == authority.certificate


def test_create_authority_refuses_to_overwrite(tmp_path):
    """A second create fails, names the file, and leaves the first CA as it was."""
    first = create_authority(str(tmp_path))
    before = (tmp_path / CA_KEY_FILE).read_bytes()
    with pytest.raises(AuthorityExistsError, match="already exists"):
        create_authority(str(tmp_path))
    assert (tmp_path / CA_KEY_FILE).read_bytes() == before
    assert load_authority(str(tmp_path)).fingerprint == first.fingerprint


def test_load_authority_round_trips(tmp_path):
    """What create writes, load reads back: same certificate, same key."""
    made = create_authority(str(tmp_path))
    loaded = load_authority(str(tmp_path))
    assert loaded.certificate == made.certificate
    assert loaded.key_pem() == made.key_pem()


def test_load_authority_refuses_a_key_others_can_read(tmp_path):
    """A CA key left group-readable is refused with the chmod that fixes it."""
    create_authority(str(tmp_path))
    os.chmod(tmp_path / CA_KEY_FILE, 0o640)
    with pytest.raises(CertificateError, match="chmod 600"):
        load_authority(str(tmp_path))


def test_load_authority_names_a_missing_directory(tmp_path):
    """No CA there: the error names the missing file."""
    with pytest.raises(CertificateError, match=f"{CA_CERT_FILE} does not exist"):
        load_authority(str(tmp_path / "nothing"))


def test_load_authority_refuses_a_key_of_another_ca(tmp_path):
    """A key that does not belong to the certificate is refused."""
    create_authority(str(tmp_path / "a"))
    create_authority(str(tmp_path / "b"))
    os.replace(tmp_path / "b" / CA_KEY_FILE, tmp_path / "a" / CA_KEY_FILE)
    with pytest.raises(CertificateError, match="does not belong"):
        load_authority(str(tmp_path / "a"))


def test_host_certificate_carries_names_and_addresses_and_is_signed_by_the_ca():
    """Every DNS name and IP address becomes a subjectAltName; the CA's key signed it."""
    authority = make_authority(now=NOW)
    cert_pem, key_pem = issue_host_certificate(authority, ["Exec1.Example.org."], ["198.18.0.3", "::1"], now=NOW)
    cert = parse_certificate(cert_pem)
    assert subject_names(cert) == ["exec1.example.org", "198.18.0.3", "::1"]
    alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("198.18.0.3") in alt.get_values_for_type(x509.IPAddress)
    assert signed_by(cert, authority.certificate)
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert cert.not_valid_before_utc < NOW < cert.not_valid_after_utc
    assert b"PRIVATE KEY" in key_pem


def test_host_certificate_of_another_ca_is_not_signed_by_this_one():
    """signed_by tells this pool's certificates from another pool's."""
    ours, theirs = make_authority(now=NOW), make_authority(now=NOW)
    cert = parse_certificate(issue_host_certificate(theirs, ["h"], now=NOW).certificate_pem)
    assert not signed_by(cert, ours.certificate)


@pytest.mark.parametrize(("names", "addresses", "message"), [
    ([], [], "at least one"),
    (["bad host"], [], "not a host name"),
    (["h"], ["300.1.1.1"], "not an IP address"),
])
def test_host_certificate_refuses_bad_names(names, addresses, message):
    """No name, a name with a space, or an impossible address: a clear error."""
    with pytest.raises(CertificateError, match=message):
        issue_host_certificate(make_authority(now=NOW), names, addresses, now=NOW)


def test_write_host_certificate_makes_the_key_0600(tmp_path):
    """The host key file is 0600 even where the umask would open it."""
    host = issue_host_certificate(make_authority(now=NOW), ["h"], now=NOW)
    old = os.umask(0)
    try:
        write_host_certificate(host, str(tmp_path / "h.crt"), str(tmp_path / "h.key"))
    finally:
        os.umask(old)
    assert _mode(tmp_path / "h.key") == 0o600
    assert load_private_key_file(str(tmp_path / "h.key")) is not None
    assert (tmp_path / "h.crt").read_bytes() == host.certificate_pem
    assert not list(tmp_path.glob("*.tmp"))


def test_fingerprint_is_sha256_hex_and_matches_in_any_spelling():
    """The fingerprint is 64 hex digits; openssl's colon form and upper case match it too."""
    authority = make_authority(now=NOW)
    pem = authority.certificate_pem()
    digest = fingerprint(pem)
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert digest == authority.fingerprint
    colons = ":".join(digest[i:i + 2] for i in range(0, 64, 2)).upper()
    assert same_fingerprint(f"SHA256 Fingerprint={colons}", pem)
    assert not same_fingerprint(make_authority(now=NOW).fingerprint, pem)


def test_fingerprint_of_garbage_is_a_clear_error():
    """Text that is no certificate is refused, not mis-hashed."""
    with pytest.raises(CertificateError, match="no PEM certificate"):
        fingerprint(b"hello")


def test_host_certificate_hides_its_key_in_repr():
    """The key never shows in a repr (logs, tracebacks)."""
    host = HostCertificate(b"cert", b"secret-key")
    assert "secret-key" not in repr(host)
