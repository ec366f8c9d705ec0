"""`etl-craft run` starts its fork server before it reads its configuration, so that the server's
imports run beside its own; the options that start no task start none, and none is left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from etl_craft.runtime.identity import process_start
from etl_craft.runtime.starter import SERVER_MODULE

# In a fresh interpreter: the command fails on its missing configuration, and the probe lists
# the fork servers this process started before it exits.
PROBE = f"""
import json, os, sys
from pathlib import Path

from etl_craft.cli.main import run

code = run(sys.argv[1:])
servers = []
for stat in Path("/proc").glob("[0-9]*/stat"):
    try:
        ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        cmdline = (stat.parent / "cmdline").read_bytes().decode()
    except OSError:
        continue
    if ppid == os.getpid() and "{SERVER_MODULE}" in cmdline:
        servers.append(int(stat.parent.name))
print(json.dumps({{"code": code, "servers": servers}}))
"""
RUN = ["--config", "missing/craft-connector.yml", "run", "--pipeline_code", "p"]


def probe(tmp_path: Path, argv: list[str], **env: str) -> tuple[int, list[int]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=tmp_path,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout.splitlines()[-1])
    return int(found["code"]), list(found["servers"])


def test_run_starts_its_fork_server_before_it_reads_its_configuration(tmp_path: Path) -> None:
    code, servers = probe(tmp_path, RUN, ETL_CRAFT_TASK_START="fork")

    assert code == 3  # configuration: no craft-connector.yml there
    assert len(servers) == 1
    assert process_start(servers[0]) is None  # stopped and reaped as the command exited


@pytest.mark.parametrize(
    ("options", "task_start"),
    [
        (["--skip", "--task_code", "t"], "fork"),
        (["--init-only", "--run-key", "k"], "fork"),
        ([], "spawn"),
    ],
)
def test_no_fork_server_when_no_task_is_forked(
    tmp_path: Path, options: list[str], task_start: str
) -> None:
    code, servers = probe(tmp_path, [*RUN, *options], ETL_CRAFT_TASK_START=task_start)

    assert code == 3
    assert servers == []
