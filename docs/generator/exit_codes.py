"""The exit code reference: ExitCode, the error class of each code, and what it means.

The codes and classes come from etl_craft.core.errors; a class's docstring is its meaning
where it has one, else MEANINGS below does. The generator refuses a code with neither.
"""

from __future__ import annotations

import inspect

from docs.generator.markdown import code, header, page, table

from etl_craft.core import errors
from etl_craft.core.errors import EtlCraftError, ExitCode
from etl_craft.runtime.stopping import STOP_SIGNALS, signal_exit_code

SOURCE = "etl_craft.core.errors"
INTRO = (
    "Every `etl-craft` command exits with one of these codes; a failure also prints "
    "`etl-craft COMMAND: <message>` on stderr, naming the object, the value found, what was "
    "expected and the remedy. An attempt's `EXIT_CODE` in `AUD_TASK_ATTEMPTS` uses the same "
    "codes. A retryable error lets a task's RETRIES try again; the others end the task run."
)
MEANINGS: dict[ExitCode, str] = {
    ExitCode.SUCCESS: "The command did what it was asked; a run it drove ended SUCCESS or SKIPPED.",
    ExitCode.FAILURE: "A run the command drove ended FAILED or CANCELLED, or a task it was "
    "asked to run did not succeed.",
    ExitCode.USAGE: "The command line is wrong: an unknown option, a missing argument, options "
    "that don't go together, or a command not in this release.",
    ExitCode.CONFIGURATION: "craft-connector.yml, `.env` or an `ETL_CRAFT_*` variable is "
    "missing, malformed or names a secret that is not set.",
    ExitCode.METADATA: "The CFG_ rows are wrong: an unknown pipeline or task code, a "
    "dependency cycle, a missing or malformed task parameter.",
    ExitCode.ENGINE_DB: "The Engine DB could not be reached or refused a statement.",
    ExitCode.MIGRATION: "A migration failed or was refused: no schema yet, a changed applied "
    "file, a file out of sequence.",
    ExitCode.WAREHOUSE: "The warehouse could not be reached or refused a statement.",
    ExitCode.TASK: "A task's handler failed (for example a business rule's SQL), or a task "
    "process ended without recording an outcome.",
    ExitCode.RUN_STATE: "The run is not in a state that allows the request: already ended, "
    "supervised by another process, more than one live run to choose from.",
    ExitCode.TIMEOUT: "An attempt ran longer than its TASK_TIMEOUT_SECONDS and was stopped.",
    ExitCode.CANCELLED: "The work was cancelled by an operator.",
    ExitCode.ALERT: "Sending an alert failed: the SMTP relay was unreachable, its certificate "
    "did not verify, or it refused every recipient.",
    ExitCode.SCRIPT: "An ingestion script raised, has no `run(context)`, or returned a "
    "result that fails the contract (row count, offset type).",
    ExitCode.NOT_FOUND: "The named project, pipeline, task, run or token does not exist.",
    ExitCode.AUTHENTICATION: "An HTTP API token was refused: unknown, revoked, expired, or "
    "limited to another project.",
    ExitCode.UNEXPECTED: "An error etl-craft did not expect: rerun with `--log-level DEBUG` "
    "and report the traceback.",
    ExitCode.INCOMPLETE: "The work is not finished: a run still QUEUED or IN-PROGRESS (paused, "
    "waiting), a backfill that stopped early, or an INCOMPLETE business rule still flagging "
    "keys.",
    ExitCode.WAITING: "`run --task` named tasks whose dependencies are not met yet; "
    "nothing was recorded.",
    ExitCode.SQL_GUARD: "A SQL task's SELECT or its rows were refused before the target was "
    "touched: not one read-only SELECT, engine-managed or duplicate columns, NULL keys, new "
    "columns without SCHEMA_EVOLUTION.",
    ExitCode.INJECTED_FAULT: "A fault point named in `ETL_CRAFT_FAULT` fired (tests only).",
}
SIGNALLED = (
    "Stopped by {name}{how} in the foreground. A foreground `etl-craft run` started nothing "
    "more, gave its running task processes `shutdown_grace_seconds` to finish (a second "
    'signal cuts it short), recorded those it stopped FAILED with "stopped by signal {name}", '
    "and released its run: `etl-craft run` again continues it."
)


def render() -> str:
    classes = _classes()
    lines = header("Exit codes", SOURCE, INTRO)
    rows = []
    for exit_code in ExitCode:
        error = classes.get(exit_code)
        rows.append(
            (
                code(str(int(exit_code))),
                code(exit_code.name),
                code(error.__name__) if error else "",
                _retryable(error),
                _meaning(exit_code, error),
            )
        )
    for signum in sorted(STOP_SIGNALS, key=signal_exit_code):
        how = " (Ctrl-C)" if signum.name == "SIGINT" else ""
        meaning = SIGNALLED.format(name=signum.name, how=how)
        rows.append((code(str(signal_exit_code(signum))), "", "", "", meaning))
    lines += table(("code", "name", "error class", "retryable", "meaning"), rows)
    return page(lines)


def _classes() -> dict[ExitCode, type[EtlCraftError]]:
    found = {
        error.exit_code: error
        for _, error in inspect.getmembers(errors, inspect.isclass)
        if issubclass(error, EtlCraftError) and error is not EtlCraftError
    }
    missing = [c.name for c in ExitCode if c not in found and c not in MEANINGS]
    missing += [
        c.name for c in ExitCode if c in found and not _docstring(found[c]) and c not in MEANINGS
    ]
    if missing:
        raise LookupError(
            f"exit codes {', '.join(missing)} have no meaning: give the error class a "
            "docstring, or add the code to MEANINGS in docs/generator/exit_codes.py"
        )
    return found


def _meaning(exit_code: ExitCode, error: type[EtlCraftError] | None) -> str:
    documented = _docstring(error) if error else ""
    return documented or MEANINGS[exit_code]


def _docstring(error: type[EtlCraftError]) -> str:
    # A class without its own docstring inherits nothing here: inspect would find the base's.
    return " ".join((error.__dict__.get("__doc__") or "").split())


def _retryable(error: type[EtlCraftError] | None) -> str:
    if error is None:
        return ""
    return "yes" if error.retryable else "no"
