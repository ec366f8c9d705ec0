"""etl-craft generate-yml: one versioned YAML file per pipeline for the Airflow DAG factory."""

from __future__ import annotations

import argparse
from pathlib import Path

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.cli.registry import Command
from etl_craft.operations.dag_yaml import DEFAULT_AIRFLOW_RANGE, Invocation
from etl_craft.operations.generate_yml import GeneratedYaml, generate_yml


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pipeline_code",
        "--pipeline-code",
        dest="pipeline_code",
        metavar="P",
        help="only this pipeline (default: every active one)",
    )
    parser.add_argument(
        "--output",
        required=True,
        type=Path,
        metavar="DIR",
        help="the folder the DAG factory reads; one P.yml per pipeline",
    )
    parser.add_argument(
        "--airflow-version",
        default=DEFAULT_AIRFLOW_RANGE,
        metavar="RANGE",
        help=f"the Airflow versions the DAGs must run on (default {DEFAULT_AIRFLOW_RANGE}, the "
        "first with the run_id and data_interval_end templates)",
    )
    parser.add_argument(
        "--etl-craft-command",
        default="etl-craft",
        metavar="PATH",
        help="how the orchestrator's workers start etl-craft (default: etl-craft on PATH)",
    )
    parser.add_argument(
        "--connector-path",
        metavar="PATH",
        help="craft-connector.yml as the workers see it, passed as --config to every command",
    )


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


COMMAND = Command(
    name="generate-yml",
    help="write each pipeline as versioned YAML for the Airflow DAG factory",
    configure=configure,
    handler=handle,
)
