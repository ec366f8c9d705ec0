"""etl-craft generate-yml: one versioned YAML file per pipeline for the Airflow DAG factory."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.operations.dag_yaml import Invocation
from etl_craft.operations.generate_yml import GeneratedYaml, generate_yml


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        profile = ctx.connector.profile if ctx.connector else None
        invocation = Invocation(args.etl_craft_command, args.connector_path, profile)
        done = generate_yml(ctx, args.output, args.pipeline_code, args.airflow_version, invocation)
    finally:
        ctx.close()
    emit(done, args.format, render(done))
    return 0


def render(done: GeneratedYaml) -> str:
    lines = [f"wrote {dag.path} ({dag.pipeline_code})" for dag in done.dags]
    lines.append(
        f"{len(done.dags)} DAG file(s) for Airflow {done.airflow_version} in {done.output}"
    )
    return "\n".join(lines)
