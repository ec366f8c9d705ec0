"""etl-craft bundle publish [--project P]: publish the project's files as a pinned bundle."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="bundle_action", metavar="ACTION", required=True)
    publish = actions.add_parser(
        "publish",
        help="upload sql_files/, ingestion_scripts/, pipelines/ and craft-connector.yml to the "
        "Artifacts store as a new bundle, which every run admitted from then on executes",
    )
    publish.add_argument(
        "--format", choices=("text", "json"), default=argparse.SUPPRESS, dest="format"
    )
    publish.add_argument(
        "--project",
        metavar="P",
        default=argparse.SUPPRESS,  # the global --project, also accepted here
        help="the project's code (default: Orchestration.project)",
    )


COMMAND = Command(
    name="bundle",
    help="publish the project's files as a bundle that runs pin, wherever they run",
    configure=configure,
    handler="etl_craft.cli.actions.bundle:handle",
)
