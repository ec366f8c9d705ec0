"""doctor: every check of an installation, each reported, whichever of them fail.

It builds what it needs step by step instead of through build_context, so that a broken
configuration or an unreachable Engine DB is one failed check and not the end of the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from sqlalchemy import exc as sa_exc

from etl_craft.config.connector import Connector
from etl_craft.config.rules import DEFAULT_WRITER_ROLE, GatePolicy
from etl_craft.config.settings import ENGINE_URL_VARIABLE, ServiceSettings, load_settings
from etl_craft.core.actor import ACTOR_VARIABLE, human_actor
from etl_craft.core.errors import ConfigurationError, EtlCraftError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.bundle_imports import bundle_imports_check
from etl_craft.operations.cloning.doctor import cloning_check
from etl_craft.operations.context import (
    ContextRequest,
    load_project_connector,
    locate_connector,
)
from etl_craft.operations.doctor import checks as db_checks
from etl_craft.operations.doctor.checks import Check, CheckStatus, DatabaseChecks, Target
from etl_craft.operations.doctor.connection_budget import ConnectionBudget
from etl_craft.operations.doctor.reach import reach_checks

DEPENDENCY_GATES = "dependency-gates"


@dataclass(frozen=True)
class DoctorReport:
    schema: ClassVar[str] = "etl-craft/doctor/1"
    healthy: bool
    checks: tuple[Check, ...]
    # The Engine DB connections etl-craft's processes may hold, on PostgreSQL.
    connection_budget: ConnectionBudget | None = None

    @classmethod
    def of(cls, checks: list[Check], budget: ConnectionBudget | None = None) -> DoctorReport:
        healthy = all(check.status is not CheckStatus.FAIL for check in checks)
        return cls(healthy=healthy, checks=tuple(checks), connection_budget=budget)

    def count(self, status: CheckStatus) -> int:
        return sum(1 for check in self.checks if check.status is status)


def doctor(request: ContextRequest, *, worker: bool = False) -> DoctorReport:
    """Every check; ``worker`` adds what a worker host needs (its interpreter resolves the
    imports of the latest bundle's scripts)."""
    loaded = _load(request)
    config_check, target = _configuration(request, loaded)
    gates = _dependency_gates(loaded.connector)
    reached = reach_checks(loaded.connector)
    mirror = cloning_check(loaded.connector)
    database = _database(target)
    checks = [_actor(), config_check, gates, *database.checks, *reached, mirror]
    if worker:
        checks.append(bundle_imports_check(target.url, loaded.connector))
    return DoctorReport.of(checks, database.budget)


def _actor() -> Check:
    try:
        actor = human_actor()
    except ConfigurationError as error:
        return Check(
            "actor",
            CheckStatus.FAIL,
            str(error),
            f"set {ACTOR_VARIABLE} to a printable name such as github:alice, or unset it",
        )
    return Check("actor", CheckStatus.PASS, f"commands act as {actor.name} ({actor.kind})")


@dataclass
class _Loaded:
    problems: list[str]
    settings: ServiceSettings | None = None
    path: Path | None = None
    connector: Connector | None = None


def _configuration(request: ContextRequest, loaded: _Loaded) -> tuple[Check, Target]:
    url = _engine_url(loaded)
    if url is None and not loaded.problems:
        loaded.problems.append(
            f"found no craft-connector.yml at or above {request.cwd} and {ENGINE_URL_VARIABLE} "
            "is not set, so there is no Engine DB to check"
        )
    target = Target(
        url=url,
        project_code=None if loaded.connector is None else loaded.connector.orchestration.project,
        migrations_dir=None
        if loaded.connector is None
        else loaded.connector.project.migrations_dir,
        project_problem=_project_problem(loaded),
        writer_role=DEFAULT_WRITER_ROLE
        if loaded.connector is None
        else loaded.connector.writer_role,
        db_pool_size=None
        if loaded.connector is None
        else loaded.connector.orchestration.db_pool_size,
    )
    if loaded.problems:
        remedy = (
            "fix each problem listed, or run inside a project (etl-craft new PATH) or set "
            f"{ENGINE_URL_VARIABLE}; then run etl-craft doctor again"
        )
        return Check("config", CheckStatus.FAIL, "\n".join(loaded.problems), remedy), target
    missing = loaded.connector.missing_secrets if loaded.connector else ()
    if missing:
        found = "\n".join([_describe(loaded, request), *missing])
        remedy = "set each variable listed; until then the server and sending alerts fail"
        return Check("config", CheckStatus.WARN, found, remedy), target
    return Check("config", CheckStatus.PASS, _describe(loaded, request)), target


def _dependency_gates(connector: Connector | None) -> Check:
    if connector is None:
        return Check(DEPENDENCY_GATES, CheckStatus.SKIP, "skipped: no project configuration loaded")
    orchestration = connector.orchestration
    if orchestration.remote:
        detail = "remote mode: the orchestrator's sensors gate each run"
        return Check(DEPENDENCY_GATES, CheckStatus.PASS, detail)
    policy = orchestration.dependency_gates
    if policy.enforced:
        return Check(
            DEPENDENCY_GATES, CheckStatus.PASS, "dependencies on other pipelines gate runs"
        )
    profile = f"profile {connector.profile}" if connector.profile else "the default profile"
    effect = (
        "a dependency not met is logged and counted as met"
        if policy is GatePolicy.WARN
        else "no dependency is judged: each counts as met"
    )
    return Check(
        DEPENDENCY_GATES,
        CheckStatus.WARN,
        f"Orchestration dependency_gates is {policy} in {profile}: {effect}, and runs may read "
        "data their upstream pipelines have not written yet (each such decision is recorded "
        "BYPASSED in AUD_GATE_DECISIONS)",
        "set dependency_gates: enforce (the default) in the profile's Orchestration section "
        "for any Engine DB whose data others use",
    )


def _load(request: ContextRequest) -> _Loaded:
    loaded = _Loaded(problems=[])
    try:
        loaded.settings = load_settings()
    except ConfigurationError as error:
        loaded.problems.append(str(error))
    try:
        loaded.path = locate_connector(request)
        loaded.connector = load_project_connector(loaded.path, request)
    except ConfigurationError as error:
        loaded.problems.append(str(error))
    return loaded


def _engine_url(loaded: _Loaded) -> str | None:
    if loaded.settings is not None and loaded.settings.engine_url is not None:
        return loaded.settings.engine_url
    return None if loaded.connector is None else loaded.connector.engine_url


def _project_problem(loaded: _Loaded) -> str | None:
    if loaded.connector is not None:
        return None
    if loaded.path is not None:
        return f"{loaded.path} did not load (see the config check)"
    return "there is no project: no craft-connector.yml at or above the working folder"


def _describe(loaded: _Loaded, request: ContextRequest) -> str:
    overridden = loaded.settings is not None and loaded.settings.engine_url is not None
    source = f"the Engine DB from {ENGINE_URL_VARIABLE}" if overridden else None
    if loaded.connector is None:
        return f"no project at or above {request.cwd}; using {source}"
    connector = loaded.connector
    profile = f" (profile {connector.profile})" if connector.profile else ""
    engine = source or "the Engine DB of the file"
    return (
        f"{connector.path}{profile} loads; project {connector.orchestration.project}, "
        f"using {engine}"
    )


def _database(target: Target) -> DatabaseChecks:
    if target.url is None:
        skipped = db_checks.skipped(
            db_checks.DATABASE_CHECKS, "there is no Engine DB URL (see config)"
        )
        return DatabaseChecks(skipped, None)
    try:
        db = EngineDB(target.url, null_pool=True, application="etl-craft doctor")
    except (EtlCraftError, sa_exc.SQLAlchemyError) as error:
        unreachable = Check(
            db_checks.ENGINE_DB,
            CheckStatus.FAIL,
            str(error),
            "set the Engine url in craft-connector.yml or ETL_CRAFT_ENGINE_URL to a "
            "postgresql:// or sqlite:/// URL",
        )
        skipped = db_checks.skipped(db_checks.DATABASE_CHECKS[1:], "no Engine DB")
        return DatabaseChecks([unreachable, *skipped], None)
    try:
        return db_checks.run_all(db, target)
    finally:
        db.dispose()
