"""No secret, nor any part of one, is stored or shown anywhere a run leaves its traces.

One secret per source (a resolved SMTP password, an Engine URL's userinfo and query passwords,
a secret-named task parameter and an INPUT_PARAMS key); a task prints, logs and echoes them and
another fails with them in its error. The values as configured stay where they were written:
CFG_ parameter rows and their change history (AUD_METADATA_CHANGES, masked when shown).
"""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from etl_craft.cli.main import run as run_cli
from etl_craft.core.redaction import MASK
from tests.integration.security.conftest import PARAMETER_SECRETS, Seeded, leaks

WHERE_CONFIGURED = {"CFG_TASK_PARAMETERS", "CFG_PIPELINE_PARAMETERS", "AUD_METADATA_CHANGES"}


def test_no_engine_db_column_holds_a_secret(seeded: Seeded) -> None:
    engine = sa.create_engine(seeded.project.connector.engine_url)
    try:
        with engine.connect() as conn:
            tables = sa.inspect(conn).get_table_names()
            found = {
                table: json.dumps(
                    [list(row) for row in conn.execute(sa.text(f"SELECT * FROM {table}"))],
                    default=str,
                )
                for table in tables
            }
    finally:
        engine.dispose()
    assert {"AUD_TASK_ATTEMPTS", "AUD_TASK_RUN_LOG"} <= {name.upper() for name in found}
    for table, text in found.items():
        others = tuple(s for s in seeded.secrets if s not in PARAMETER_SECRETS)
        secrets = others if table.upper() in WHERE_CONFIGURED else seeded.secrets
        assert leaks(text, secrets) == [], table


def test_the_failed_attempts_error_is_masked_before_it_is_cut(seeded: Seeded) -> None:
    [row] = seeded.api.rows(
        "SELECT a.ERROR_MESSAGE AS error FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG r ON r.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN CFG_TASKS t ON t.TASK_ID = r.TASK_ID WHERE t.TASK_CODE = 'failing'"
    )
    assert row["error"].startswith("script leak.py raised RuntimeError: xxx")
    assert len(row["error"]) <= 2000
    assert leaks(row["error"], seeded.secrets) == []


def test_no_log_file_holds_a_secret(seeded: Seeded) -> None:
    files = sorted((seeded.project.root / "logs").rglob("*"))
    logs = [path for path in files if path.is_file()]
    assert len(logs) >= 2
    for path in logs:
        text = path.read_text(errors="replace")
        assert leaks(text, seeded.secrets) == [], path
    leaky = next(path for path in logs if path.name.startswith("leaky"))
    assert leaky.read_text().count("***") >= 5 * len(seeded.secrets)  # it did print them


def test_a_log_read_at_any_offset_shows_no_part_of_a_secret(seeded: Seeded) -> None:
    for attempt in _attempts(seeded):
        whole = seeded.api.call("GET", f"/api/v1/attempts/{attempt}/log")
        assert whole.status_code == 200
        for offset in _offsets_worth_reading(whole.content):
            read = seeded.api.call("GET", f"/api/v1/attempts/{attempt}/log?offset={offset}")
            assert leaks(read.text, seeded.secrets) == [], (attempt, offset)


def test_no_api_answer_about_the_run_shows_a_secret(seeded: Seeded) -> None:
    paths = [
        "/api/v1/pipelines/vault",
        "/api/v1/pipelines/vault/runs",
        f"/api/v1/runs/{seeded.run_id}",
        f"/api/v1/runs/{seeded.run_id}/tasks",
        "/api/v1/audit?pipeline_code=vault",
        *(f"/api/v1/attempts/{attempt}" for attempt in _attempts(seeded)),
    ]
    for path in paths:
        answer = seeded.api.call("GET", path, "admin")
        assert answer.status_code == 200, (path, answer.text)
        assert leaks(answer.text, seeded.secrets) == [], path


def test_no_process_output_shows_a_secret(seeded: Seeded) -> None:
    assert leaks(seeded.output, seeded.secrets) == []


def test_doctor_shows_no_url_password_in_text_or_json(
    seeded: Seeded, capsys: pytest.CaptureFixture[str]
) -> None:
    config = str(seeded.project.config)
    for command in (["doctor"], ["doctor", "--format", "json"]):
        capsys.readouterr()
        run_cli(["--config", config, *command])
        out, err = capsys.readouterr()
        assert "Engine DB" in out or "engine-db" in out
        assert leaks(out + err, seeded.secrets) == [], command


def _offsets_worth_reading(log: bytes) -> list[int]:
    """Around every line start, and each byte of the first line of every kind that held a
    secret (the task prints the same secrets once per way of writing: print, logging, stderr,
    a descriptor, a program), so a read begins inside each secret at every position."""
    offsets = {len(log)}
    start = 0
    kinds: set[bytes] = set()
    for line in log.splitlines(keepends=True):
        offsets.update(range(max(0, start - 1), start + 2))
        kind = line.split(b":", 1)[0][-12:]
        if MASK.encode() in line and kind not in kinds:
            kinds.add(kind)
            offsets.update(range(start, start + len(line)))
        start += len(line)
    return sorted(offsets)


def _attempts(seeded: Seeded) -> list[int]:
    rows = seeded.api.rows("SELECT ATTEMPT_ID AS id FROM AUD_TASK_ATTEMPTS ORDER BY ATTEMPT_ID")
    return [int(row["id"]) for row in rows]
