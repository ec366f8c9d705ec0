"""The banner shows on a terminal for the commands a person starts, and nowhere a program reads."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from etl_craft import __version__
from etl_craft.cli.banner import SUPPRESS_VARIABLE, banner

ETL_CRAFT = str(Path(sys.executable).with_name("etl-craft"))


def _env(**more: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("ETL_CRAFT_") and key != "NO_COLOR"
    }
    return {**env, "TERM": "xterm", "COLUMNS": "100", **more}


def _on_terminal(argv: list[str], cwd: Path, **env: str) -> str:
    """What ``argv`` writes to a terminal (a pseudo-terminal), stdout and stderr together."""
    leader, follower = pty.openpty()
    os.set_blocking(leader, True)
    process = subprocess.Popen(
        argv, cwd=cwd, stdin=follower, stdout=follower, stderr=follower, env=_env(**env)
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")


def test_the_banner_shows_on_a_terminal_with_the_version(tmp_path: Path) -> None:
    shown = _on_terminal([ETL_CRAFT, "new", str(tmp_path / "p")], tmp_path)
    assert f"etl-craft {__version__}: metadata-driven ETL" in shown
    assert "|___|" in shown  # the drawing, on a terminal wide enough


@pytest.mark.parametrize(
    ("extra", "env"),
    [
        (["--no-banner"], {}),
        ([], {SUPPRESS_VARIABLE: "1"}),
        ([], {"NO_COLOR": "1"}),
        ([], {"TERM": "dumb"}),
    ],
    ids=["--no-banner", SUPPRESS_VARIABLE, "NO_COLOR", "TERM=dumb"],
)
def test_the_banner_is_suppressed_on_request_and_on_plain_terminals(
    tmp_path: Path, extra: list[str], env: dict[str, str]
) -> None:
    shown = _on_terminal([ETL_CRAFT, *extra, "new", str(tmp_path / "p")], tmp_path, **env)
    assert "metadata-driven ETL" not in shown
    assert "created" in shown or "project" in shown  # the command itself ran


def test_no_banner_in_json_or_a_pipe(tmp_path: Path) -> None:
    as_json = _on_terminal([ETL_CRAFT, "--format", "json", "new", str(tmp_path / "a")], tmp_path)
    piped = subprocess.run(
        [ETL_CRAFT, "new", str(tmp_path / "b")],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert "metadata-driven ETL" not in as_json
    assert "metadata-driven ETL" not in piped.stdout + piped.stderr


def test_a_child_process_of_a_command_that_showed_it_shows_none(tmp_path: Path) -> None:
    # The parent shows the banner on the terminal, then its child, on the same terminal,
    # runs an interactive command too: one banner in all.
    script = tmp_path / "parent.py"
    script.write_text(
        "import os, subprocess, sys\n"
        "from etl_craft.cli.main import run\n"
        "run(['new', sys.argv[1]])\n"
        f"subprocess.run([{ETL_CRAFT!r}, 'new', sys.argv[1] + '-child'], check=True)\n"
    )
    shown = _on_terminal([sys.executable, str(script), str(tmp_path / "p")], tmp_path)
    assert shown.count("metadata-driven ETL") == 1
    assert (tmp_path / "p-child").is_dir()


def test_a_narrow_terminal_gets_one_line() -> None:
    assert banner("1.2.3", 30) == "etl-craft 1.2.3: metadata-driven ETL\n"
    assert banner("1.2.3", 100).count("\n") == 6  # four of drawing, the version, a blank
