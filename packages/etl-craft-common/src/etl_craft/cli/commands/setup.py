"""etl-craft setup --print-grants: the GRANTs for etl-craft's writer and read-only roles."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.cli.registry import Command
from etl_craft.core.errors import UsageError
from etl_craft.operations.grants import DEFAULT_READER_ROLE, GrantRequest, GrantsReport, grants


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--print-grants",
        action="store_true",
        help="print the statements that create the writer and reader roles and grant them "
        "access; run them as the tables' owner or a superuser",
    )
    parser.add_argument(
        "--writer-role",
        help="the role whose members may write (default: Engine.writer_role of the "
        "configuration, else etl_craft_writer)",
    )
    parser.add_argument(
        "--reader-role",
        default=DEFAULT_READER_ROLE,
        help="the read-only role (default: %(default)s)",
    )
    parser.add_argument(
        "--writer-login",
        action="append",
        default=[],
        metavar="LOGIN",
        help="a login etl-craft's services connect as, made a writer role member; repeatable",
    )
    parser.add_argument(
        "--reader-login",
        action="append",
        default=[],
        metavar="LOGIN",
        help="a login that only reads, made a member of the reader role; repeatable",
    )


def handle(args: argparse.Namespace) -> int:
    if not args.print_grants:
        raise UsageError(
            "etl-craft setup needs --print-grants: it prints the GRANT statements for the "
            "writer and reader roles (etl-craft setup --print-grants)"
        )
    ctx = operation_context(args)
    try:
        request = GrantRequest(
            writer_role=args.writer_role or ctx.writer_role,
            reader_role=args.reader_role,
            writer_logins=tuple(args.writer_login),
            reader_logins=tuple(args.reader_login),
        )
        report = grants(ctx.engine, request)
    finally:
        ctx.close()
    emit(report, args.format, render(report))
    return 0


def render(report: GrantsReport) -> str:
    header = [
        f"-- Access to the etl-craft Engine DB {report.engine_db}, schema {report.table_schema}.",
        f"-- Run as {report.owner} (the owner of etl-craft's tables) or a superuser. Only the",
        f"-- owner and members of {report.writer_role} may write; {report.reader_role} only reads.",
    ]
    return "\n".join([*header, *report.statements])


COMMAND = Command(
    name="setup",
    help="print the PostgreSQL GRANTs for etl-craft's writer and read-only roles",
    configure=configure,
    handler=handle,
)
