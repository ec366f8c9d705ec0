"""A worker login bound to a pool claims only that pool's attempts: the database refuses the
rest, whatever the worker's own code asks for (`setup --print-grants --worker-login`)."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import DBAPIError

from etl_craft.core.actor import Actor, ActorKind
from etl_craft.core.enums import SlotKind
from etl_craft.enginedb.transitions.attempts import claim_attempts
from etl_craft.operations.access.grants import GrantRequest, WorkerLogin, grants
from tests.fixtures.databases import unique_name
from tests.fixtures.metadata import TESTER, execute
from tests.integration.security.test_writer_roles import Cluster, cluster

__all__ = ["cluster"]

pytestmark = pytest.mark.postgres

WORKER = Actor("worker-a", ActorKind.WORKER)


def _queued(cluster: Cluster, pool: str) -> int:
    """A due QUEUED attempt of the seeded run's first task run, in ``pool``."""
    db = cluster.engine_as("postgres")
    try:
        with db.transaction(TESTER) as conn:
            execute(conn, "INSERT INTO CFG_POOLS (POOL_NAME) VALUES (:p)", p=pool)
            run = execute(
                conn,
                "INSERT INTO AUD_PIPELINES_RUN_LOG (PIPELINE_ID, RUN_KEY, TRIGGER_KIND, RUN_DATE, "
                "STATUS, QUEUED_AT, STARTED_BY, STARTED_BY_KIND) SELECT PIPELINE_ID, :k, "
                "'MANUAL', '2026-01-01', 'IN-PROGRESS', etl_craft_now(), 't', 'HUMAN' FROM "
                "CFG_PIPELINES WHERE PIPELINE_CODE = 'upstream' RETURNING PIPELINE_RUN_ID",
                k=f"manual:{pool}",
            ).scalar_one()
            task_run = execute(
                conn,
                "INSERT INTO AUD_TASK_RUN_LOG (PIPELINE_RUN_ID, TASK_ID, STATUS, UPDATED_BY, "
                "UPDATED_BY_KIND) SELECT :r, TASK_ID, 'IN-PROGRESS', 't', 'HUMAN' FROM CFG_TASKS "
                "WHERE TASK_CODE = 'a' RETURNING TASK_RUN_ID",
                r=run,
            ).scalar_one()
            return int(
                execute(
                    conn,
                    "INSERT INTO AUD_TASK_ATTEMPTS (TASK_RUN_ID, ATTEMPT_NUMBER, STATUS, POOL, "
                    "SLOT_KIND, QUEUED_AT, REQUESTED_BY, REQUESTED_BY_KIND) VALUES (:t, 1, "
                    "'QUEUED', :p, 'warehouse', etl_craft_now(), 't', 'HUMAN') RETURNING ATTEMPT_ID",
                    t=task_run,
                    p=pool,
                ).scalar_one()
            )
    finally:
        db.dispose()


def _bound_login(cluster: Cluster, pool: str) -> str:
    login = cluster.login("etl_craft_worker")
    binding = WorkerLogin(login, pool)
    cluster.roles.insert(0, binding.pool_role)  # dropped after the login that is its member
    db = cluster.engine_as("postgres")
    try:
        printed = grants(
            db, GrantRequest(writer_role=cluster.writer_role, worker_logins=(binding,))
        )
    finally:
        db.dispose()
    pool_statements = [s for s in printed.statements if binding.pool_role in s or login in s]
    assert pool_statements == [
        f"CREATE ROLE {binding.pool_role} NOLOGIN;",
        f'GRANT {cluster.writer_role} TO "{login}";',
        f'GRANT {binding.pool_role} TO "{login}";',
    ]
    for statement in pool_statements:
        cluster.admin.execute(statement.encode())
    return login


def _claim(cluster: Cluster, login: str, pool: str) -> list[int]:
    db = cluster.engine_as(login)
    try:
        with db.transaction(WORKER) as conn:
            claimed = claim_attempts(
                conn,
                WORKER,
                pool=pool,
                free={SlotKind.WAREHOUSE: 5},
                owner_id="host:1:worker-a",
                lease_seconds=60,
                summarise=False,
            )
        return [attempt.attempt_id for attempt in claimed]
    finally:
        db.dispose()


def test_a_pool_bound_worker_claims_its_pool_and_is_refused_anothers(cluster: Cluster) -> None:
    mine, theirs = unique_name("pool_a"), unique_name("pool_b")
    own_attempt, other_attempt = _queued(cluster, mine), _queued(cluster, theirs)
    login = _bound_login(cluster, mine)

    assert _claim(cluster, login, mine) == [own_attempt]
    with pytest.raises(DBAPIError) as refused:
        _claim(cluster, login, theirs)
    message = str(refused.value)
    assert f"login {login} may claim attempts of pool {mine} only" in message
    assert f"attempt {other_attempt} is in pool {theirs}" in message
    assert (
        cluster.scalar(f"SELECT STATUS FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = {other_attempt}")
        == "QUEUED"
    )


def test_a_writer_bound_to_no_pool_claims_any(cluster: Cluster) -> None:
    pool = unique_name("pool_c")
    attempt = _queued(cluster, pool)
    login = cluster.login("etl_craft_service", f"GRANT {cluster.writer_role} TO {{role}}")
    assert _claim(cluster, login, pool) == [attempt]
