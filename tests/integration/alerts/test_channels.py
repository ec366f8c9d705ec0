"""Alerts the overseer raises itself, with no alert task in the pipeline: a missed SLA and a
LOST attempt each reach a channel once, signed; a sink that fails is tried again later, each
wait longer, and gets the alert once when it recovers."""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from etl_craft.config.connector import load_connector
from etl_craft.config.rules import TlsMode
from etl_craft.operations.alerts.webhook import SIGNATURE_HEADER, TIMESTAMP_HEADER
from etl_craft_overseer.overseer import Overseer
from etl_craft_overseer.queue_pool import QueuePool
from tests.fixtures.metadata import (
    TESTER,
    SeededPipeline,
    execute,
    seed_attempt,
    seed_pipeline,
    seed_run,
    seed_task_run,
)
from tests.fixtures.processes import chaos_project
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.alerts.relay import Mailbox, relay
from tests.integration.alerts.sink import Sink, sink

__all__ = ["chaos_project"]

KEY = "hmac-key-for-the-test-sink"
GONE_OWNER = "elsewhere-host:4242:1:gone"  # an owner on another host whose lease has expired


@pytest.fixture
def project(chaos_project: ProjectOnDisk) -> ProjectOnDisk:
    """A project on each Engine DB dialect."""
    return chaos_project


@pytest.fixture
def channel_sink() -> Iterator[Sink]:
    with sink() as made:
        yield made


def overseer(project: ProjectOnDisk, sink: Sink, **alerts: Any) -> Overseer:
    """An overseer whose configuration has a webhook channel for every event and pipeline,
    and a Slack channel for LOST attempts only."""
    settings = "".join(f"  {key}: {value}\n" for key, value in alerts.items())
    section = (
        "Alerts:\n"
        f"{settings}"
        "  links_base_url: https://etl.example.com/ui/\n"
        "  channels:\n"
        "    - {name: ops, kind: webhook, url_variable: OPS_HOOK, secret_variable: OPS_KEY}\n"
        "    - {name: chat, kind: slack, url_variable: SLACK_HOOK, events: [ATTEMPT_LOST]}\n"
    )
    with project.config.open("a") as config:
        config.write(section)
    environ = {"OPS_HOOK": f"{sink.url}/ops", "OPS_KEY": KEY, "SLACK_HOOK": f"{sink.url}/slack"}
    if (project.root / ".env").exists():
        environ["TEST_ENGINE_URL"] = project.connector.engine_url
    connector = load_connector(project.config, profile=None, environ=environ)
    owner = project.owner_settings(owner_id="overseer:1:0:o", poll_seconds=60.0)
    # The queue provider starts nothing: the test drives the overseer's housekeeping alone.
    return Overseer(project.engine, owner, QueuePool(project.engine), alerts=connector.alerts)


def late_and_lost(project: ProjectOnDisk) -> tuple[int, int, int]:
    """A live run an hour past its 1-minute SLA, and a running attempt whose owner is gone;
    the pipeline's one task is a Python script, no alert task."""
    pipeline = seed_pipeline(project.engine, tasks=("load",), handler="PYTHON")
    late = seed_run(project.engine, pipeline.pipeline_id, "IN-PROGRESS")
    running = seed_run(project.engine, pipeline.pipeline_id, "IN-PROGRESS")
    task_run = seed_task_run(project.engine, running, pipeline.task_ids["load"], "IN-PROGRESS")
    attempt = seed_attempt(
        project.engine, task_run, "RUNNING", owner_id=GONE_OWNER, lease_seconds=-3600
    )
    with project.engine.transaction(TESTER) as conn:
        execute(
            conn,
            "UPDATE CFG_PIPELINES SET SLA_MINUTES = 1 WHERE PIPELINE_ID = :p",
            p=pipeline.pipeline_id,
        )
        execute(
            conn,
            "UPDATE AUD_PIPELINES_RUN_LOG SET START_DATE = etl_craft_add_seconds(etl_craft_now(), "
            "-3600) WHERE PIPELINE_RUN_ID = :r",
            r=late,
        )
    return late, running, attempt


def deliveries(project: ProjectOnDisk) -> list[tuple[Any, ...]]:
    with project.engine.read() as conn:
        return [
            tuple(row)
            for row in execute(
                conn,
                "SELECT CHANNEL, EVENT, PIPELINE_RUN_ID, ATTEMPT_ID, OUTCOME, TRIES, LAST_ERROR "
                "FROM AUD_ALERT_DELIVERIES ORDER BY CHANNEL, EVENT",
            ).all()
        ]


def failed_run(project: ProjectOnDisk) -> tuple[SeededPipeline, int]:
    """A run of a one-task pipeline that just ended FAILED with the message 'task load failed'."""
    pipeline = seed_pipeline(project.engine, tasks=("load",), handler="PYTHON")
    failed = seed_run(project.engine, pipeline.pipeline_id, "FAILED")
    with project.engine.transaction(TESTER) as conn:
        execute(
            conn,
            "UPDATE AUD_PIPELINES_RUN_LOG SET END_DATE = etl_craft_now(), MESSAGE = 'task load "
            "failed' WHERE PIPELINE_RUN_ID = :r",
            r=failed,
        )
    return pipeline, failed


def signed_by(key: str, headers: dict[str, str], body: bytes) -> bool:
    signed = headers[TIMESTAMP_HEADER].encode() + b"." + body
    expected = "sha256=" + hmac.new(key.encode(), signed, hashlib.sha256).hexdigest()
    return hmac.compare_digest(headers[SIGNATURE_HEADER], expected)


def test_a_missed_sla_and_a_lost_attempt_each_raise_one_signed_alert(
    project: ProjectOnDisk, channel_sink: Sink
) -> None:
    late, running, attempt = late_and_lost(project)
    server = overseer(project, channel_sink)
    for _ in range(3):  # passes after the first find nothing new to raise
        server._housekeeping()

    ops = channel_sink.accepted("/ops")
    assert sorted((item.document["event"], item.document["run"]["id"]) for item in ops) == [
        ("ATTEMPT_LOST", running),
        ("SLA_MISSED", late),
    ]
    assert all(signed_by(KEY, item.headers, item.body) for item in ops)
    assert not any(signed_by("another key", item.headers, item.body) for item in ops)
    lost = next(item.document for item in ops if item.document["event"] == "ATTEMPT_LOST")
    assert lost["task"] == {"code": "load", "attempt_id": attempt}
    assert lost["status"] == "LOST"
    assert lost["links"]["attempt"] == f"https://etl.example.com/ui/attempts/{attempt}"
    [slack] = channel_sink.accepted("/slack")
    assert set(slack.document) == {"text"}
    assert f"attempt {attempt} of task load in run {running}" in slack.document["text"]
    assert SIGNATURE_HEADER not in slack.headers
    assert deliveries(project) == [
        ("chat", "ATTEMPT_LOST", running, attempt, "DELIVERED", 1, None),
        ("ops", "ATTEMPT_LOST", running, attempt, "DELIVERED", 1, None),
        ("ops", "SLA_MISSED", late, None, "DELIVERED", 1, None),
    ]


def test_a_sink_outage_is_retried_later_each_time_and_ends_in_one_delivery(
    project: ProjectOnDisk, channel_sink: Sink, caplog: pytest.LogCaptureFixture
) -> None:
    pipeline, failed = failed_run(project)
    channel_sink.statuses = [500, 500]
    server = overseer(project, channel_sink, retry_seconds=1)
    caplog.set_level(logging.WARNING, "etl_craft.operations.alerts")

    server._housekeeping()
    assert [item.answered for item in channel_sink.received] == [500]
    assert deliveries(project) == [
        ("ops", "RUN_FAILED", failed, None, "PENDING", 1, "the channel answered HTTP 500")
    ]
    assert (
        f"alert to channel ops (run {failed} of {pipeline.code} failed) failed on try 1"
        in caplog.text
    )
    server._housekeeping()  # the next try is not due yet: nothing is sent
    assert len(channel_sink.received) == 1

    def delivered() -> bool:
        server._housekeeping()
        return bool(channel_sink.accepted("/ops"))

    wait_for(delivered, "the alert delivered once the sink recovers", timeout=30, every=0.2)
    server._housekeeping()
    assert [item.answered for item in channel_sink.received] == [500, 500, 200]
    [document] = [item.document for item in channel_sink.accepted("/ops")]
    assert (document["event"], document["run"]["id"], document["error"]) == (
        "RUN_FAILED",
        failed,
        "task load failed",
    )
    assert deliveries(project) == [("ops", "RUN_FAILED", failed, None, "DELIVERED", 3, None)]


def stuck_gate_and_pool(project: ProjectOnDisk) -> tuple[int, int, int]:
    """A run whose gate has waited two hours for its upstream, and an attempt queued an hour
    ago in a pool whose only worker stopped beating; no alert task anywhere."""
    pipeline = seed_pipeline(project.engine, tasks=("load",), handler="PYTHON")
    gated = seed_run(project.engine, pipeline.pipeline_id, "IN-PROGRESS")
    queued_run = seed_run(project.engine, pipeline.pipeline_id, "IN-PROGRESS")
    task_run = seed_task_run(project.engine, queued_run, pipeline.task_ids["load"], "IN-PROGRESS")
    attempt = seed_attempt(project.engine, task_run, "QUEUED", pool="remote")
    with project.engine.transaction(TESTER) as conn:
        execute(
            conn,
            "INSERT INTO AUD_GATE_WAITS (PIPELINE_RUN_ID, TASK_ID, FIRST_CHECK_AT, NEXT_CHECK_AT, "
            "WAIT_UNTIL) VALUES (:r, :t, etl_craft_add_seconds(etl_craft_now(), -7200), "
            "etl_craft_add_seconds(etl_craft_now(), 60), etl_craft_add_seconds(etl_craft_now(), "
            "3600))",
            r=gated,
            t=pipeline.task_ids["load"],
        )
        execute(
            conn,
            "UPDATE AUD_TASK_ATTEMPTS SET QUEUED_AT = etl_craft_add_seconds(etl_craft_now(), "
            "-3600) WHERE ATTEMPT_ID = :a",
            a=attempt,
        )
        execute(
            conn,
            "INSERT INTO AUD_WORKERS (WORKER_ID, POOL, HOST, PID, VERSION, SCHEMA_VERSION, "
            "INGESTION_SLOTS, WAREHOUSE_SLOTS, STARTED_AT, HEARTBEAT_AT, STATUS) VALUES "
            "('remote-1', 'remote', 'elsewhere', 1, '0.9.0', 1, 1, 1, "
            "etl_craft_add_seconds(etl_craft_now(), -7200), "
            "etl_craft_add_seconds(etl_craft_now(), -3600), 'ACTIVE')",
        )
    return gated, queued_run, attempt


def test_a_long_gate_wait_and_a_pool_without_live_workers_each_raise_one_alert(
    project: ProjectOnDisk, channel_sink: Sink
) -> None:
    gated, queued_run, attempt = stuck_gate_and_pool(project)
    server = overseer(project, channel_sink, gate_wait_minutes=30)
    for _ in range(3):  # the stall lasts: later passes raise nothing new
        server._housekeeping()

    ops = channel_sink.accepted("/ops")
    assert sorted((item.document["event"], item.document["run"]["id"]) for item in ops) == [
        ("GATE_WAITING", gated),
        ("NO_WORKER", queued_run),
    ]
    stalled = next(item.document for item in ops if item.document["event"] == "NO_WORKER")
    assert stalled["task"] == {"code": "load", "attempt_id": attempt}
    assert "waits in a pool that has no live worker" in str(stalled["summary"])
    assert deliveries(project) == [
        ("ops", "GATE_WAITING", gated, None, "DELIVERED", 1, None),
        ("ops", "NO_WORKER", queued_run, attempt, "DELIVERED", 1, None),
    ]


def test_a_gate_within_its_threshold_and_a_pool_with_a_live_worker_raise_nothing(
    project: ProjectOnDisk, channel_sink: Sink
) -> None:
    stuck_gate_and_pool(project)
    with project.engine.transaction(TESTER) as conn:
        execute(conn, "UPDATE AUD_WORKERS SET HEARTBEAT_AT = etl_craft_now()")
    server = overseer(project, channel_sink, gate_wait_minutes=180)
    server._housekeeping()
    assert channel_sink.received == []
    assert deliveries(project) == []


def test_an_email_channel_sends_the_alert_through_the_relay(project: ProjectOnDisk) -> None:
    pipeline, failed = failed_run(project)
    mailbox = Mailbox()
    with relay(mailbox, tls=TlsMode.NONE) as port:
        with project.config.open("a") as config:
            config.write(
                f"Email:\n  host: 127.0.0.1\n  port: {port}\n  tls_mode: none\n"
                "  from_address: etl@example.com\n"
                "Alerts:\n  channels:\n"
                "    - {name: oncall, kind: email, to: [oncall@example.com], "
                "events: [RUN_FAILED]}\n"
            )
        environ = {}
        if (project.root / ".env").exists():
            environ["TEST_ENGINE_URL"] = project.connector.engine_url
        connector = load_connector(project.config, profile=None, environ=environ)
        owner = project.owner_settings(owner_id="overseer:1:0:o", poll_seconds=60.0)
        server = Overseer(project.engine, owner, QueuePool(project.engine), alerts=connector.alerts)
        server._housekeeping()
        server._housekeeping()

    assert len(mailbox.messages) == 1
    assert mailbox.messages[0].rcpt_tos == ["oncall@example.com"]
    text = mailbox.text()
    assert f"run {failed} of {pipeline.code} failed" in text
    assert "task load failed" in text
    assert deliveries(project) == [("oncall", "RUN_FAILED", failed, None, "DELIVERED", 1, None)]
