"""Alerts through a real SMTP relay on loopback: plain, STARTTLS and implicit TLS."""

from __future__ import annotations

from email import message_from_string
from email.header import decode_header, make_header
from pathlib import Path

import pytest

from etl_craft.config.rules import TlsMode
from etl_craft.core.errors import AlertError, MetadataError
from etl_craft.core.redaction import Redactor
from etl_craft.handlers.alerts import Alert, Flavour, send_alert
from tests.integration.alerts.relay import (
    Mailbox,
    email_settings,
    make_certificates,
    relay,
)

SECRET = "hunter2-relay-secret"
PSYCOPG_ERROR = (
    'psycopg.errors.UndefinedColumn: column "amount" does not exist\n'
    "LINE 1: SELECT amount FROM sales.orders\n"
    "               ^\r\nHINT:  Perhaps you meant amount_eur.\t" + "x" * 300
)


def failure_alert(recipients: tuple[str, ...] = ("ops@example.com",), **values: object) -> Alert:
    return Alert(
        flavour=Flavour.FAILURE,
        recipients=recipients,
        subject_template=None,
        body_template=None,
        values={
            "pipeline_code": "sales",
            "task_code": "alert",
            "run_id": 42,
            "run_key": "manual:1",
            "run_date": "2026-01-01",
            "status": "FAILED",
            "error": PSYCOPG_ERROR,
            "duration": "1m 2s",
        }
        | values,
    )


def subject_of(mailbox: Mailbox) -> str:
    return str(make_header(decode_header(message_from_string(mailbox.text())["Subject"])))


def test_a_multi_line_error_arrives_in_a_one_line_subject() -> None:
    mailbox = Mailbox()
    with relay(mailbox, tls=TlsMode.NONE) as port:
        outcome = send_alert(email_settings(port, TlsMode.NONE), failure_alert(), Redactor([]))
    subject = subject_of(mailbox)
    assert subject.startswith(
        "[etl-craft] sales run 42 FAILED: psycopg.errors.UndefinedColumn: column"
    )
    assert not any(control in subject for control in "\n\r\t")
    assert len(subject) == 200
    assert subject.endswith("…")
    body = message_from_string(mailbox.text()).get_payload(decode=True)
    assert isinstance(body, bytes)
    assert "HINT:  Perhaps you meant amount_eur." in body.decode()  # the full error stays
    assert outcome.warning is None


def test_a_secret_never_reaches_the_message() -> None:
    mailbox = Mailbox()
    error = f"could not connect: password={SECRET} rejected"
    with relay(mailbox, tls=TlsMode.NONE) as port:
        outcome = send_alert(
            email_settings(port, TlsMode.NONE), failure_alert(error=error), Redactor([SECRET])
        )
    assert SECRET not in mailbox.text()
    assert "password=*** rejected" in mailbox.text()
    assert SECRET not in outcome.task_log


def test_a_partial_refusal_is_a_warning_and_succeeds() -> None:
    mailbox = Mailbox()
    recipients = ("ops@example.com", "nobody@example.com")
    with relay(mailbox, tls=TlsMode.NONE) as port:
        outcome = send_alert(
            email_settings(port, TlsMode.NONE), failure_alert(recipients), Redactor([])
        )
    assert mailbox.messages[0].rcpt_tos == ["ops@example.com"]
    assert outcome.warning is not None
    assert "refused 1 of 2 recipient(s) (nobody@example.com: 550" in outcome.warning
    assert "WARNING: the relay refused" in outcome.task_log


def test_a_total_refusal_fails() -> None:
    mailbox = Mailbox()
    with (
        relay(mailbox, tls=TlsMode.NONE) as port,
        pytest.raises(AlertError, match="refused every recipient: nobody@example.com: 550"),
    ):
        send_alert(
            email_settings(port, TlsMode.NONE),
            failure_alert(("nobody@example.com",)),
            Redactor([]),
        )
    assert mailbox.messages == []


def test_an_unknown_token_is_refused() -> None:
    alert = Alert(Flavour.SUCCESS, ("ops@example.com",), "{pipeline} done", None, {})
    with pytest.raises(MetadataError, match=r"SUBJECT uses \{pipeline\}, which is not a token"):
        send_alert(email_settings(1, TlsMode.NONE), alert, Redactor([]))


@pytest.mark.parametrize("flavour", list(Flavour))
def test_every_flavour_has_a_default_subject(flavour: Flavour) -> None:
    mailbox = Mailbox()
    alert = Alert(
        flavour,
        ("ops@example.com",),
        None,
        None,
        {"pipeline_code": "sales", "run_id": 7, "status": "SUCCESS", "run_date": "2026-01-01"},
        digest=("run 7 SUCCESS", "run 8 FAILED"),
    )
    with relay(mailbox, tls=TlsMode.NONE) as port:
        send_alert(email_settings(port, TlsMode.NONE), alert, Redactor([]))
    assert "sales" in subject_of(mailbox)
    assert "run 8 FAILED" in mailbox.text()


@pytest.mark.parametrize("tls", [TlsMode.STARTTLS, TlsMode.SSL])
def test_tls_is_accepted_with_the_ca_and_a_matching_name(tls: TlsMode, tmp_path: Path) -> None:
    certificates = make_certificates(tmp_path, ["localhost", "127.0.0.1"])
    mailbox = Mailbox()
    with relay(mailbox, tls=tls, certificates=certificates) as port:
        settings = email_settings(port, tls, ca_file=certificates.ca_file)
        send_alert(settings, failure_alert(), Redactor([]))
    assert len(mailbox.messages) == 1


@pytest.mark.parametrize("tls", [TlsMode.STARTTLS, TlsMode.SSL])
def test_tls_is_refused_for_a_wrong_host_name(tls: TlsMode, tmp_path: Path) -> None:
    certificates = make_certificates(tmp_path, ["mail.example.test"])
    mailbox = Mailbox()
    with (
        relay(mailbox, tls=tls, certificates=certificates) as port,
        pytest.raises(AlertError, match="certificate that does not verify .*mismatch.*ca_file"),
    ):
        send_alert(
            email_settings(port, tls, ca_file=certificates.ca_file), failure_alert(), Redactor([])
        )
    assert mailbox.messages == []


@pytest.mark.parametrize("tls", [TlsMode.STARTTLS, TlsMode.SSL])
def test_tls_is_refused_without_the_ca(tls: TlsMode, tmp_path: Path) -> None:
    certificates = make_certificates(tmp_path, ["localhost", "127.0.0.1"])
    with (
        relay(Mailbox(), tls=tls, certificates=certificates) as port,
        pytest.raises(AlertError, match="certificate that does not verify"),
    ):
        send_alert(email_settings(port, tls), failure_alert(), Redactor([]))
