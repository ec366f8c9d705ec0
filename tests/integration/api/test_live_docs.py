"""The HTTP API guide's examples, run in order against live `etl-craft api` and `etl-craft server`
processes serving the project `etl-craft new` creates."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.fixtures.processes import BIN, clean_env, free_port, stop, wait_until_up

pytestmark = pytest.mark.e2e

GUIDE = Path(__file__).parents[3] / "docs" / "guides" / "http-api.md"
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)


def guide_script() -> str:
    blocks = BLOCK.findall(GUIDE.read_text())
    return "set -euo pipefail\n" + "\n".join(blocks)


@dataclass
class Site:
    root: Path
    env: dict[str, str]
    url: str

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "etl-craft"), *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    env = clean_env(
        ETL_CRAFT_ACTOR="docs@tests",
        ETL_CRAFT_POLL_SECONDS="0.2",
        PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    port = free_port()
    made = Site(tmp_path / "demo", {**env, "ETL_CRAFT_API": f"http://127.0.0.1:{port}"}, "")
    made.url = made.env["ETL_CRAFT_API"]
    subprocess.run([str(BIN / "etl-craft"), "new", "demo"], cwd=tmp_path, env=env, check=True)
    made.run("init-db")
    made.run("migrate")
    started: list[subprocess.Popen[bytes]] = []
    try:
        for name, args in (("server", ["server"]), ("api", ["api", "--port", str(port)])):
            with (tmp_path / f"{name}.out").open("wb") as sink:
                started.append(
                    subprocess.Popen(
                        [str(BIN / "etl-craft"), "--log-level", "INFO", *args],
                        cwd=made.root,
                        env=made.env,
                        stdout=sink,
                        stderr=subprocess.STDOUT,
                    )
                )
        wait_until_up(made.url, started[-1])
        yield made
    finally:
        for process in started:
            process.terminate()  # both at once: the server needn't wait for the API to stop
        for process in started:
            stop(process)


def test_every_example_of_the_guide_runs_against_a_live_api(site: Site) -> None:
    script = guide_script() + '\nprintf "%s\\n" "$TOKEN" "$ADMIN_TOKEN" > ../tokens.out\n'
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=site.root,
        env=site.env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"

    tokens = (site.root.parent / "tokens.out").read_text().split()
    logs = (site.root.parent / "api.out").read_text() + (
        site.root.parent / "server.out"
    ).read_text()
    engine = create_engine(f"sqlite:///{site.root / 'etl-craft' / 'data' / 'engine.db'}")
    try:
        with engine.connect() as conn:
            actions = [
                dict(row) for row in conn.execute(text("SELECT * FROM AUD_ACTIONS")).mappings()
            ]
            runs = conn.execute(
                text("SELECT TRIGGER_KIND, STARTED_BY FROM AUD_PIPELINES_RUN_LOG")
            ).all()
    finally:
        engine.dispose()
    assert len(tokens) == 2
    assert '"GET /api/v1/projects/demo/runs/' in logs
    for token in tokens:
        assert token not in logs
        assert token not in json.dumps(actions, default=str)
        assert token not in done.stdout
    assert {("MANUAL", "ci"), ("BACKFILL", "ci")} <= {tuple(run) for run in runs}
    assert "run" in {action["COMMAND"] for action in actions if action["ACTOR"] == "ci"}
