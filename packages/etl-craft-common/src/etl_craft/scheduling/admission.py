"""Admitting a QUEUED run through its pipeline gate: the run starts, or is skipped with why."""

from __future__ import annotations

import time
from collections.abc import Callable

from etl_craft.config.rules import GatePolicy
from etl_craft.core.actor import SYSTEM
from etl_craft.core.enums import RunStatus
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.gate_records import pipeline_gate_dependencies
from etl_craft.enginedb.runs import read_run
from etl_craft.enginedb.transitions import admit_run, skip_run
from etl_craft.scheduling.gatekeeper import Bypass, Dependency, Gatekeeper
from etl_craft.scheduling.gates import DEFAULT_WAIT_MINUTES, GateResult


def pipeline_dependencies(engine: EngineDB, pipeline_id: int) -> list[Dependency]:
    with engine.read() as conn:
        rows = pipeline_gate_dependencies(conn, pipeline_id)
    return [
        Dependency(
            task_id=None,
            upstream_pipeline_id=row.upstream_id,
            upstream_task_id=None,
            dependency_type=row.dependency_type,
            consume_repairs=row.consume_repairs,
            name=row.upstream_code,
            pipeline_dependency_id=row.pipeline_dependency_id,
        )
        for row in rows
    ]


def admit(
    engine: EngineDB,
    run_id: int,
    *,
    wait_minutes: float = DEFAULT_WAIT_MINUTES,
    poll_seconds: float = 1.0,
    bypass: Bypass | None = None,
    policy: GatePolicy = GatePolicy.ENFORCE,
    sleep: Callable[[float], None] = time.sleep,  # a foreground run's also ends on a stop signal
) -> RunStatus:
    """Judge the pipeline gate until it decides; IN-PROGRESS when admitted, else SKIPPED."""
    admission = Admission(engine, run_id, wait_minutes, bypass, policy)
    while (decided := admission.try_admit()) is None:
        # The foreground waits here as an overseer would: the wait is also a row a restart resumes.
        sleep(poll_seconds)
    return decided


class Admission:
    """A QUEUED run's pipeline gate, judged without blocking: the overseer looks once a pass."""

    def __init__(
        self,
        engine: EngineDB,
        run_id: int,
        wait_minutes: float = DEFAULT_WAIT_MINUTES,
        bypass: Bypass | None = None,
        policy: GatePolicy = GatePolicy.ENFORCE,
    ) -> None:
        self.engine, self.run_id = engine, run_id
        with engine.read() as conn:
            run = read_run(conn, run_id)
        self.dependencies = pipeline_dependencies(engine, run.pipeline_id)
        self.gates = Gatekeeper(engine, run_id, wait_minutes, bypass, policy)

    def try_admit(self) -> RunStatus | None:
        """IN-PROGRESS or SKIPPED once every gate decided; None while one still waits."""
        judgements = self.gates.judge_all(self.dependencies)
        if not all(judgement.final for judgement in judgements.values()):
            return None
        refused = [j.reason for j in judgements.values() if j.result is GateResult.UNSATISFIED]
        with self.engine.transaction(SYSTEM) as conn:
            self.gates.record(conn, self.dependencies)
            if refused:
                skip_run(conn, self.run_id, SYSTEM, message="; ".join(refused))
                return RunStatus.SKIPPED
            admit_run(conn, self.run_id, SYSTEM)
        return RunStatus.IN_PROGRESS
