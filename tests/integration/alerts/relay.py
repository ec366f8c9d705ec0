"""A real SMTP relay on loopback (aiosmtpd) and a CA with server certificates made in the test."""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from etl_craft.config.rules import TlsMode
from etl_craft.config.sections import Email

HOST = "127.0.0.1"


@dataclass
class Mailbox:
    """Keeps every message; refuses recipients whose local part starts with 'nobody'."""

    messages: list[Envelope] = field(default_factory=list)

    async def handle_RCPT(  # noqa: N802 - aiosmtpd's hook name
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: Any
    ) -> str:
        if address.startswith("nobody"):
            return "550 5.1.1 no such mailbox"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(  # noqa: N802 - aiosmtpd's hook name
        self, server: SMTP, session: Session, envelope: Envelope
    ) -> str:
        self.messages.append(envelope)
        return "250 Message accepted"

    def text(self, index: int = 0) -> str:
        content = self.messages[index].content
        assert isinstance(content, bytes)
        return content.decode()


@dataclass(frozen=True)
class Certificates:
    ca_file: Path
    cert_file: Path
    key_file: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


def make_certificates(folder: Path, names: list[str]) -> Certificates:
    """A fresh CA, and a server certificate it signed for ``names`` (DNS names or IPs)."""
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "etl-craft test CA")])
    ca = (
        _builder(ca_name, ca_name, ca_key, now)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    alternative = [_general_name(name) for name in names]
    cert = (
        _builder(subject, ca_name, key, now)
        .add_extension(x509.SubjectAlternativeName(alternative), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = Certificates(folder / "ca.pem", folder / "server.pem", folder / "server.key")
    files.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files.key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey, now: datetime
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


@contextmanager
def relay(
    mailbox: Mailbox, *, tls: TlsMode, certificates: Certificates | None = None
) -> Iterator[int]:
    """Run the relay in its own thread for the block; yields its port."""
    port = free_port()
    options: dict[str, Any] = {}
    if tls is TlsMode.SSL:
        assert certificates is not None
        options["ssl_context"] = certificates.server_context()
    elif tls is TlsMode.STARTTLS:
        assert certificates is not None
        options.update(tls_context=certificates.server_context(), require_starttls=True)
    controller = Controller(mailbox, hostname=HOST, port=port, ready_timeout=10, **options)
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


def email_settings(
    port: int, tls: TlsMode, *, host: str = HOST, ca_file: Path | None = None
) -> Email:
    return Email(
        host=host,
        port=port,
        tls_mode=tls,
        username=None,
        password_variable=None,
        password=None,
        from_address="etl@example.com",
        ca_file=ca_file,
        verify=True,
    )
