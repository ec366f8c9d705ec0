"""A task process's log records reach its attempt log once each, with the attempt's context."""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from textwrap import dedent

import pytest

from etl_craft.core.enums import AttemptStatus, Handler
from etl_craft.core.redaction import Redactor
from etl_craft.enginedb.attempts import AttemptInvocation
from etl_craft.handlers.scripts import run_script
from etl_craft.runtime.context_logging import configure_task_logging
from etl_craft.scripting import ScriptContext

CHATTY = dedent(
    """
    import logging
    from etl_craft.scripting import ScriptResult

    def run(context):
        print("printed once")
        context.log.info("from the context logger %s", context.input_params["secret_token"])
        logging.getLogger("urllib3.connectionpool").info("GET https://x/?key=abc")
        logging.getLogger("urllib3.connectionpool").warning("retrying")
        return ScriptResult(row_count=3)
    """
)


def invocation() -> AttemptInvocation:
    return AttemptInvocation(
        attempt_id=5,
        attempt_number=1,
        status=AttemptStatus.RUNNING,
        owner_id="owner",
        task_run_id=4,
        pipeline_run_id=2,
        pipeline_id=1,
        task_id=3,
        project_code="default",
        pipeline_code="crm",
        task_code="pull",
        handler=Handler.PYTHON,
        run_key="manual:test",
        run_date=date(2026, 1, 1),
        parameters={},
        pipeline_parameters={},
    )


def context() -> ScriptContext:
    return ScriptContext(
        offset=None,
        offset_type=None,
        input_params={"secret_token": "hunter22"},
        run_date=date(2026, 1, 1),
        pipeline_id=1,
        pipeline_run_id=2,
        task_id=3,
        task_run_id=4,
        attempt_id=5,
        log=logging.getLogger("etl_craft.script.pull"),
    )


@pytest.fixture(autouse=True)
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    chatty = logging.getLogger("urllib3").level
    try:
        yield
    finally:
        root.handlers[:], root.level = saved
        logging.getLogger("urllib3").setLevel(chatty)


def run_chatty(folder: Path, level: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the script as a task process does, its standard error being the attempt log."""
    (folder / "chatty.py").write_text(CHATTY)
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    redactor = Redactor(["hunter22"])
    configure_task_logging(invocation(), level, redactor)
    run_script(folder, "chatty.py", context(), log=sys.stderr, redactor=redactor)
    return log.getvalue()


def test_each_record_and_print_is_written_once_with_its_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = run_chatty(tmp_path, "INFO", monkeypatch).splitlines()
    logged = [line for line in lines if "from the context logger" in line]
    assert len(logged) == 1, lines
    assert "[crm.pull run=2 task_run=4 attempt=1] etl_craft.script.pull" in logged[0]
    assert logged[0].endswith("from the context logger ***")
    assert lines.count("printed once") == 1
    assert len([line for line in lines if "retrying" in line]) == 1
    assert not any("key=abc" in line or "hunter22" in line for line in lines)


def test_debug_lets_library_loggers_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "key=abc" in run_chatty(tmp_path, "DEBUG", monkeypatch)
