"""etl-craft setup --print-grants: the GRANTs for etl-craft's writer and read-only roles."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.core.errors import UsageError
from etl_craft.operations.access.grants import GrantRequest, GrantsReport, WorkerLogin, grants


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
            worker_logins=tuple(_worker_login(text) for text in args.worker_login),
        )
        report = grants(ctx.engine, request)
    finally:
        ctx.close()
    emit(report, args.format, render(report))
    return 0


def _worker_login(text: str) -> WorkerLogin:
    login, equals, pool = text.partition("=")
    if not equals or not login or not pool:
        raise UsageError(
            f"--worker-login {text!r} names no pool; expected LOGIN=POOL, such as "
            "--worker-login etl_worker_gpu=gpu"
        )
    return WorkerLogin(login, pool)


def render(report: GrantsReport) -> str:
    header = [
        f"-- Access to the etl-craft Engine DB {report.engine_db}, schema {report.table_schema}.",
        f"-- Run as {report.owner} (the owner of etl-craft's tables) or a superuser. Only the",
        f"-- owner and members of {report.writer_role} may write; {report.reader_role} only reads.",
    ]
    return "\n".join([*header, *report.statements])
