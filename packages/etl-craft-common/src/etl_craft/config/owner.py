"""How one owner of runs and attempts works, read once from the configuration.

An owner is the process that holds run and attempt leases: a foreground `etl-craft run`, the
overseer of `etl-craft server`, or a worker agent. Everything it builds (its run supervisor,
the drivers of its runs, its local pool, the task processes it starts) takes the one
``OwnerSettings`` it was given, so no part of it reads the configuration again or keeps a
default of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from etl_craft.config.connector import Connector
from etl_craft.config.rules import DEFAULTS, GatePolicy
from etl_craft.config.settings import ServiceSettings, artifacts_store, logs_store
from etl_craft.core.errors import ConfigurationError
from etl_craft.stores import StoreSettings

DEFAULT_GATE_WAIT_MINUTES = 60.0
DEFAULT_PARALLEL_TASKS = 4
DEFAULT_SHUTDOWN_GRACE_SECONDS = 60.0
DEFAULT_TAIL_BYTES = int(str(DEFAULTS["Logs"]["tail_bytes"]))


@dataclass(frozen=True)
class OwnerSettings:
    owner_id: str  # the owner id its leases carry (runtime.identity.owner_id)
    engine_url: str  # with its password: the task processes connect with it
    config_path: Path | None  # the craft-connector.yml its task processes load
    profile: str | None
    logs_dir: Path  # where its task processes write their attempt logs
    log_level: str = "INFO"  # of its task processes (ETL_CRAFT_LOG_LEVEL)
    default_retries: int = 0  # Orchestration retries, for tasks that set none
    default_parallel_tasks: int = DEFAULT_PARALLEL_TASKS  # Orchestration max_parallel_tasks
    gate_wait_minutes: float = DEFAULT_GATE_WAIT_MINUTES
    max_warehouse_queries: int | None = None  # the Warehouse section's max_queries
    dependency_gates: GatePolicy = GatePolicy.ENFORCE
    lease_seconds: float = 60.0
    heartbeat_seconds: float = 15.0
    poll_seconds: float = 1.0
    # After a stop, how long running task processes have to finish before they are stopped.
    shutdown_grace_seconds: float = DEFAULT_SHUTDOWN_GRACE_SECONDS
    log_store: StoreSettings | None = None  # where attempt logs go once their attempts end
    log_tail_bytes: int = DEFAULT_TAIL_BYTES  # how much of each log TASK_LOG keeps
    # Where its runs' bundles are fetched from; None: its task processes read config_path's
    # project folder.
    artifacts_store: StoreSettings | None = None
    bundle_cache: Path = Path("bundles")  # where it materialises them, one folder per bundle id


def owner_settings(
    service: ServiceSettings,
    connector: Connector | None,
    *,
    owner_id: str,
    engine_url: str,
    logs_dir: Path,
    timing: tuple[float, float] | None = None,
    bundle_cache: Path = Path("bundles"),
) -> OwnerSettings:
    """The settings of an owner from the service settings and the project's connector;
    ``timing`` (lease, heartbeat seconds) replaces the ones :func:`lease_timing` finds."""
    lease, heartbeat = lease_timing(service, connector) if timing is None else timing
    orchestration = connector.orchestration if connector else None
    return OwnerSettings(
        owner_id=owner_id,
        engine_url=engine_url,
        config_path=connector.path if connector else None,
        profile=connector.profile if connector else None,
        logs_dir=logs_dir,
        log_level=service.log_level,
        default_retries=orchestration.retries if orchestration else 0,
        default_parallel_tasks=(
            orchestration.max_parallel_tasks if orchestration else DEFAULT_PARALLEL_TASKS
        ),
        gate_wait_minutes=(
            float(orchestration.gate_wait_minutes) if orchestration else DEFAULT_GATE_WAIT_MINUTES
        ),
        max_warehouse_queries=connector.warehouse.max_queries if connector else None,
        dependency_gates=orchestration.dependency_gates if orchestration else GatePolicy.ENFORCE,
        lease_seconds=lease,
        heartbeat_seconds=heartbeat,
        poll_seconds=service.poll_seconds,
        shutdown_grace_seconds=(
            float(orchestration.shutdown_grace_seconds)
            if orchestration
            else DEFAULT_SHUTDOWN_GRACE_SECONDS
        ),
        log_store=logs_store(service, connector),
        log_tail_bytes=connector.logs.tail_bytes if connector else DEFAULT_TAIL_BYTES,
        artifacts_store=artifacts_store(service, connector),
        bundle_cache=service.bundle_cache or bundle_cache,
    )


def lease_timing(service: ServiceSettings, connector: Connector | None) -> tuple[float, float]:
    """(lease, heartbeat) seconds: ETL_CRAFT_LEASE_SECONDS / _HEARTBEAT_SECONDS when set, else
    the project's Orchestration lease_seconds with a heartbeat of at most a quarter of it."""
    lease = float(service.lease_seconds)
    if "lease_seconds" not in service.given and connector is not None:
        lease = float(connector.orchestration.lease_seconds)
    heartbeat = float(service.heartbeat_seconds)
    if "heartbeat_seconds" not in service.given:
        heartbeat = min(heartbeat, lease / 4)
    if heartbeat >= lease:
        raise ConfigurationError(
            f"the heartbeat of {heartbeat:g}s is not below the lease of {lease:g}s "
            "(ETL_CRAFT_HEARTBEAT_SECONDS, Orchestration lease_seconds); expected a heartbeat "
            "well inside the lease, such as a quarter of it"
        )
    return lease, heartbeat
