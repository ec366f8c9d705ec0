"""Deliver an alert over SMTP (STARTTLS, implicit TLS or none), verifying the relay."""

from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from etl_craft.config.rules import TlsMode
from etl_craft.config.sections import Email
from etl_craft.core.errors import AlertError
from etl_craft.core.redaction import Redactor

TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class Delivery:
    accepted: tuple[str, ...]
    # Address -> the relay's code and reply, for recipients it refused while taking the others.
    refused: dict[str, str]


def tls_context(settings: Email) -> ssl.SSLContext:
    cafile = str(settings.ca_file) if settings.ca_file else None
    context = ssl.create_default_context(cafile=cafile)
    if not settings.verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def send(
    settings: Email,
    *,
    subject: str,
    body: str,
    recipients: list[str],
    redactor: Redactor,
) -> Delivery:
    """Send one message; headers are built in the same try, so a bad header fails like a send."""
    settings.require_password()
    relay = f"{settings.host}:{settings.port} ({settings.tls_mode})"
    try:
        message = _message(settings, subject, body, recipients)
        refused = _transmit(settings, message, recipients)
    except smtplib.SMTPRecipientsRefused as error:
        raise AlertError(
            f"the SMTP relay {relay} refused every recipient: {_replies(error.recipients)}; "
            "check RECIPIENTS"
        ) from error
    except ssl.SSLCertVerificationError as error:
        raise AlertError(
            f"the SMTP relay {relay} presented a certificate that does not verify "
            f"({error.verify_message}); set Email ca_file to the CA that signed it and make sure "
            "host names the certificate"
        ) from error
    except (smtplib.SMTPException, OSError, ValueError) as error:
        raise AlertError(
            redactor(
                f"sending the alert through {relay} failed: {type(error).__name__}: {error}; "
                "check the Email section of craft-connector.yml and that the relay is up"
            )
        ) from error
    replies = {
        address: f"{code} {reply.decode(errors='replace')}"
        for address, (code, reply) in refused.items()
    }
    return Delivery(tuple(r for r in recipients if r not in replies), replies)


def _message(settings: Email, subject: str, body: str, recipients: list[str]) -> EmailMessage:
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = settings.from_address
    message["To"] = ", ".join(recipients)
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain=settings.from_address.rpartition("@")[2] or None)
    message.set_content(body)
    return message


def _transmit(
    settings: Email, message: EmailMessage, recipients: list[str]
) -> dict[str, tuple[int, bytes]]:
    with _session(settings, TIMEOUT_SECONDS) as client:
        if settings.username and settings.password:
            client.login(settings.username, settings.password)
        return client.send_message(message, to_addrs=recipients)


def reach(settings: Email, timeout_seconds: float) -> str:
    """Whether the relay answers and, with STARTTLS, agrees on TLS; AlertError naming it."""
    relay = f"{settings.host}:{settings.port} ({settings.tls_mode})"
    try:
        with _session(settings, timeout_seconds) as client:
            code, _ = client.noop()
    except (smtplib.SMTPException, OSError, ValueError) as error:
        raise AlertError(
            f"the SMTP relay {relay} does not answer: {type(error).__name__}: {error}"
        ) from error
    return f"the SMTP relay {relay} answers ({code})"


def _session(settings: Email, timeout_seconds: float) -> smtplib.SMTP:
    client: smtplib.SMTP
    if settings.tls_mode is TlsMode.SSL:
        client = smtplib.SMTP_SSL(
            settings.host, settings.port, context=tls_context(settings), timeout=timeout_seconds
        )
    else:
        client = smtplib.SMTP(settings.host, settings.port, timeout=timeout_seconds)
    if settings.tls_mode is TlsMode.STARTTLS:
        try:
            client.starttls(context=tls_context(settings))
        except BaseException:
            client.close()
            raise
    return client


def _replies(recipients: dict[str, tuple[int, bytes]]) -> str:
    return "; ".join(
        f"{address}: {code} {reply.decode(errors='replace')}"
        for address, (code, reply) in recipients.items()
    )
