"""Reading a folder of etl-craft DAG YAML files: known versions only, every field checked.

The factory reads only what it builds from, and refuses a file it cannot build faithfully
(an unknown etl_craft_yaml_version, a missing field, an upstream that names no step) with the
file and the reason, rather than building a DAG that runs something else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SUPPORTED_VERSIONS = (1,)
COMMAND_KINDS = ("init", "task", "finalize")
SENSOR_KIND = "sensor"


class DagFileError(ValueError):
    """A YAML file the factory refuses; the message names the file and the reason."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


@dataclass(frozen=True)
class Step:
    task_id: str
    kind: str
    trigger_rule: str
    upstream: tuple[str, ...]
    bash_command: str | None = None
    external_dag_id: str | None = None
    external_task_id: str | None = None
    allowed_states: tuple[str, ...] = ()
    failed_states: tuple[str, ...] = ()
    timeout_seconds: int = 3600
    poke_interval_seconds: int = 60


@dataclass(frozen=True)
class DagSpec:
    path: Path
    dag_id: str
    description: str
    schedule: str | None
    timezone: str
    start_date: str
    max_active_runs: int
    tags: tuple[str, ...]
    env: dict[str, str]
    steps: tuple[Step, ...]


def read_folder(folder: Path) -> list[DagSpec]:
    """Every *.yml and *.yaml file of ``folder``, in name order."""
    if not folder.is_dir():
        raise DagFileError(folder, "is not a folder of etl-craft YAML files")
    paths = sorted(p for p in folder.iterdir() if p.suffix in (".yml", ".yaml") and p.is_file())
    specs = [read_file(path) for path in paths]
    seen: dict[str, Path] = {}
    for spec in specs:
        if spec.dag_id in seen:
            raise DagFileError(spec.path, f"dag_id {spec.dag_id} is also in {seen[spec.dag_id]}")
        seen[spec.dag_id] = spec.path
    return specs


def read_file(path: Path) -> DagSpec:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise DagFileError(path, f"cannot be read as YAML: {error}") from None
    if not isinstance(document, dict):
        raise DagFileError(path, "expected a mapping with etl_craft_yaml_version at the top")
    version = document.get("etl_craft_yaml_version")
    if version not in SUPPORTED_VERSIONS:
        raise DagFileError(
            path,
            f"etl_craft_yaml_version is {version!r}; this etl-craft-airflow reads version(s) "
            f"{', '.join(map(str, SUPPORTED_VERSIONS))}: regenerate the file with a matching "
            "etl-craft generate-yml, or upgrade etl-craft-airflow",
        )
    return _spec(path, document)


def _spec(path: Path, document: dict[str, Any]) -> DagSpec:
    fields = _Fields(path)
    dag = fields.mapping(document, "dag")
    env = fields.mapping(document, "env")
    steps = tuple(_step(fields, item) for item in fields.items(document, "tasks"))
    ids = [step.task_id for step in steps]
    for step in steps:
        missing = [name for name in step.upstream if name not in ids]
        if missing:
            raise DagFileError(path, f"step {step.task_id} names unknown upstream {missing}")
    if len(set(ids)) != len(ids):
        raise DagFileError(path, "two steps share a task_id")
    schedule = dag.get("schedule")
    if schedule is not None and not isinstance(schedule, str):
        raise DagFileError(path, f"dag.schedule is {schedule!r}; expected a cron text or null")
    return DagSpec(
        path=path,
        dag_id=fields.text(dag, "dag_id"),
        description=str(dag.get("description") or ""),
        schedule=schedule,
        timezone=fields.text(dag, "timezone"),
        start_date=fields.text(dag, "start_date"),
        max_active_runs=fields.number(dag, "max_active_runs"),
        tags=tuple(str(tag) for tag in dag.get("tags") or ()),
        env={str(key): str(value) for key, value in env.items()},
        steps=steps,
    )


def _step(fields: _Fields, item: dict[str, Any]) -> Step:
    kind, task_id = fields.text(item, "kind"), fields.text(item, "task_id")
    rule = fields.text(item, "trigger_rule")
    upstream = tuple(str(name) for name in item.get("upstream") or ())
    if kind in COMMAND_KINDS:
        return Step(task_id, kind, rule, upstream, bash_command=fields.text(item, "bash_command"))
    if kind == SENSOR_KIND:
        return Step(
            task_id,
            kind,
            rule,
            upstream,
            external_dag_id=fields.text(item, "external_dag_id"),
            external_task_id=fields.text(item, "external_task_id"),
            allowed_states=tuple(str(s) for s in item.get("allowed_states") or ()),
            failed_states=tuple(str(s) for s in item.get("failed_states") or ()),
            timeout_seconds=fields.number(item, "timeout_seconds"),
            poke_interval_seconds=fields.number(item, "poke_interval_seconds"),
        )
    raise DagFileError(
        fields.path, f"step {task_id} has kind {kind!r}; expected init, task, finalize or sensor"
    )


@dataclass(frozen=True)
class _Fields:
    path: Path

    def mapping(self, document: dict[str, Any], key: str) -> dict[str, Any]:
        found = document.get(key)
        if not isinstance(found, dict):
            raise DagFileError(self.path, f"{key} is {found!r}; expected a mapping")
        return found

    def items(self, document: dict[str, Any], key: str) -> list[dict[str, Any]]:
        found = document.get(key)
        if not isinstance(found, list) or not all(isinstance(i, dict) for i in found):
            raise DagFileError(self.path, f"{key} is {found!r}; expected a list of mappings")
        return found

    def text(self, document: dict[str, Any], key: str) -> str:
        found = document.get(key)
        if not isinstance(found, str) or not found:
            raise DagFileError(self.path, f"{key} is {found!r}; expected non-empty text")
        return found

    def number(self, document: dict[str, Any], key: str) -> int:
        found = document.get(key)
        if not isinstance(found, int) or isinstance(found, bool) or found < 1:
            raise DagFileError(self.path, f"{key} is {found!r}; expected a whole number >= 1")
        return found
