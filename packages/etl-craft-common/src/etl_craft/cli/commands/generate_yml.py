"""etl-craft generate-yml: one versioned YAML file per pipeline for the Airflow DAG factory."""

from __future__ import annotations

import argparse
from pathlib import Path

from etl_craft.cli import vocabulary
from etl_craft.cli.registry import Command
from etl_craft.core.defaults import AIRFLOW_RANGE


def configure(parser: argparse.ArgumentParser) -> None:
    vocabulary.pipeline(
        parser, required=False, help="only this pipeline (default: every active one)"
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
        default=AIRFLOW_RANGE,
        metavar="RANGE",
        help=f"the Airflow versions the DAGs must run on (default {AIRFLOW_RANGE}, the "
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


COMMAND = Command(
    name="generate-yml",
    help="write each pipeline as versioned YAML for the Airflow DAG factory",
    configure=configure,
    handler="etl_craft.cli.actions.generate_yml:handle",
)
