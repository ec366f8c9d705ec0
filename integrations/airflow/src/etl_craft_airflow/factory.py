"""DAGs from etl-craft's YAML: a BashOperator per command step, an ExternalTaskSensor per sensor.

Airflow is imported only when a DAG is built, so the package imports (and type-checks) where
Airflow is not installed. Both Airflow 2.11 and 3.x are supported: 3.x moved the operators to
the standard provider and DAG to airflow.sdk, and the older paths are the fallback.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from etl_craft_airflow.documents import SENSOR_KIND, DagSpec, Step, read_folder


def build_dag(spec: DagSpec) -> Any:
    dag_class, bash, sensor = _airflow_classes()
    import pendulum

    year, month, day = (int(part) for part in spec.start_date.split("-"))
    dag = dag_class(
        dag_id=spec.dag_id,
        description=spec.description,
        schedule=spec.schedule,
        start_date=pendulum.datetime(year, month, day, tz=spec.timezone),
        catchup=False,
        max_active_runs=spec.max_active_runs,
        tags=list(spec.tags),
        default_args={"retries": 0},  # etl-craft retries a task itself (RETRIES)
    )
    operators = {}
    with dag:
        for step in spec.steps:
            operators[step.task_id] = (
                _sensor(sensor, step) if step.kind == SENSOR_KIND else _bash(bash, step, spec.env)
            )
    for step in spec.steps:
        for name in step.upstream:
            operators[name] >> operators[step.task_id]
    return dag


def load_dags(folder: str | Path, namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every DAG of ``folder``'s YAML files by dag_id, also put into ``namespace`` (a DAG
    file's globals(), where Airflow's DagBag looks for them)."""
    dags = {spec.dag_id: build_dag(spec) for spec in read_folder(Path(folder))}
    if namespace is not None:
        namespace.update(dags)
    return dags


def _bash(bash: Any, step: Step, env: dict[str, str]) -> Any:
    return bash(
        task_id=step.task_id,
        bash_command=step.bash_command,
        env=dict(env),
        append_env=True,  # the worker's PATH and secrets, plus the run key and date
        trigger_rule=step.trigger_rule,
    )


def _sensor(sensor: Any, step: Step) -> Any:
    return sensor(
        task_id=step.task_id,
        external_dag_id=step.external_dag_id,
        external_task_id=step.external_task_id,
        allowed_states=list(step.allowed_states),
        failed_states=list(step.failed_states),
        timeout=timedelta(seconds=step.timeout_seconds).total_seconds(),
        poke_interval=step.poke_interval_seconds,
        mode="reschedule",  # a waiting sensor holds no worker slot
        trigger_rule=step.trigger_rule,
    )


def _airflow_classes() -> tuple[Any, Any, Any]:
    try:
        from airflow.sdk import DAG
    except ImportError:  # Airflow 2
        from airflow import DAG
    try:
        from airflow.providers.standard.operators.bash import BashOperator
        from airflow.providers.standard.sensors.external_task import ExternalTaskSensor
    except ImportError:  # Airflow 2 without the standard provider
        from airflow.operators.bash import BashOperator
        from airflow.sensors.external_task import ExternalTaskSensor
    return DAG, BashOperator, ExternalTaskSensor
