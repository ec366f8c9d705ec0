"""The README's first command, as written, in a fresh clone with a virtual environment of its own."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.demo.demo_site import PIPELINES

ROOT = Path(__file__).resolve().parents[3]


def readme_command() -> str:
    block = re.search(
        r"## Try it.*?```bash\n(.+?)\n```", (ROOT / "README.md").read_text(), re.DOTALL
    )
    assert block is not None, "the README has no bash block under ## Try it"
    return block.group(1).strip()


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs a git checkout to clone")
def test_the_readme_command_runs_the_demo_from_a_fresh_clone(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    command = readme_command()
    # uv is installed already; everything after it runs as the README says, with no
    # environment of this test's own leaking in.
    assert command.startswith("pip install uv && ")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ETL_CRAFT_", "VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"))
    }
    env["PATH"] = os.pathsep.join(
        part for part in env["PATH"].split(os.pathsep) if not part.startswith(str(ROOT))
    )
    uv = shutil.which("uv", path=env["PATH"])
    assert uv is not None, "uv must be on PATH"
    done = shell(command.removeprefix("pip install uv && "), cwd=clone, env=env, timeout=600)

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (clone / ".venv").is_dir()  # its own environment, not this test's
    for pipeline in PIPELINES:
        assert re.search(rf"^{pipeline}\s+\d+\s+SUCCESS", done.stdout, re.MULTILINE), pipeline
    assert (clone / "etl-craft-demo" / "etl-craft" / "data" / "warehouse.duckdb").is_file()
    folder, status = next_steps(done.stdout)[:2]
    assert folder.startswith("cd ")
    tried = shell(f"{folder} && {status} --format json", cwd=tmp_path, env=env, timeout=120)
    assert tried.returncode == 0, f"{status!r} as printed: {tried.stderr[-2000:]}"
    assert json.loads(tried.stdout)["pipeline_code"] == "si_transform"


def next_steps(out: str) -> list[str]:
    lines = out.splitlines()
    start = lines.index("Next, try:") + 1
    return [line.strip() for line in lines[start:] if line.startswith("  ")]


def shell(
    command: str, *, cwd: Path, env: dict[str, str], timeout: int
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        shell=True,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
