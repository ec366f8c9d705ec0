"""generate-yml: the versioned YAML of each pipeline, checked against its schema, then written.

Every selected pipeline is judged before any file is written: one the orchestrator cannot
express refuses the whole generation, so a folder never holds half a project's DAGs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import yaml

from etl_craft.core.defaults import AIRFLOW_RANGE
from etl_craft.core.errors import OrchestratorUnsupportedError
from etl_craft.enginedb.metadata import read_project_metadata
from etl_craft.operations.context import OperationContext
from etl_craft.operations.dag_yaml import (
    DagDocument,
    Invocation,
    dag_document,
    dag_schema,
)
from etl_craft.operations.remote.rules import unsupported


@dataclass(frozen=True)
class WrittenDag:
    pipeline_code: str
    path: str


@dataclass(frozen=True)
class GeneratedYaml:
    schema: ClassVar[str] = "etl-craft/generate-yml/1"
    project: str
    output: str
    airflow_version: str
    dags: tuple[WrittenDag, ...]


def generate_yml(
    ctx: OperationContext,
    output: Path,
    pipeline_code: str | None = None,
    airflow_version: str = AIRFLOW_RANGE,
    invocation: Invocation | None = None,
) -> GeneratedYaml:
    documents = build_documents(ctx, pipeline_code, airflow_version, invocation)
    output.mkdir(parents=True, exist_ok=True)
    written = []
    for found in documents:
        path = output / f"{found.pipeline_code}.yml"
        path.write_text(yaml.safe_dump(found.document, sort_keys=False, width=120))
        written.append(WrittenDag(found.pipeline_code, str(path)))
    return GeneratedYaml(ctx.project_code, str(output), airflow_version, tuple(written))


def build_documents(
    ctx: OperationContext,
    pipeline_code: str | None,
    airflow_version: str,
    invocation: Invocation | None,
) -> list[DagDocument]:
    with ctx.engine.read() as conn:
        metadata = read_project_metadata(conn, ctx.project_code)
    chosen = (
        [metadata.pipeline(pipeline_code)]
        if pipeline_code is not None
        else [p for p in metadata.pipelines if p.active]
    )
    refused = [item for pipeline in chosen for item in unsupported(metadata, pipeline)]
    if refused:
        raise OrchestratorUnsupportedError(
            f"generate-yml wrote nothing: {len(refused)} rule(s) cannot be expressed: "
            + "; ".join(item.sentence() for item in refused)
        )
    invocation = invocation or default_invocation(ctx)
    wait = ctx.connector.orchestration.gate_wait_minutes if ctx.connector else 60
    documents = [
        dag_document(metadata, pipeline, invocation, airflow_version, wait) for pipeline in chosen
    ]
    for found in documents:
        check_document(found.document)
    return documents


def default_invocation(ctx: OperationContext) -> Invocation:
    profile = ctx.connector.profile if ctx.connector else None
    return Invocation(profile=profile)


def check_document(document: dict[str, Any]) -> None:
    """The document against dag-yaml-v1.schema.json; a failure here is etl-craft's own bug."""
    jsonschema.validate(document, dag_schema())
