"""The etl-craft banner: shown once, by the commands a person starts at a terminal, never where a
program reads the output (JSON, a pipe, a file), on a plain terminal, or in a child process."""

from __future__ import annotations

import os
import shutil
from typing import TextIO

# Commands a person starts by hand and watches; workers, task processes and the reading
# commands that scripts call stay quiet.
INTERACTIVE = frozenset({"demo", "new", "server", "ui", "api"})
SUPPRESS_VARIABLE = "ETL_CRAFT_NO_BANNER"

_ART = (
    r"  ___ _____ _       ___          __ _   ",
    r" | __|_   _| |     / __|_ _ __ _/ _| |_ ",
    r" | _|  | | | |__  | (__| '_/ _` |  _|  _|",
    r" |___| |_| |____|  \___|_| \__,_|_|  \__|",
)


def banner(version: str, width: int) -> str:
    """The banner for a terminal ``width`` columns wide: the drawing, or one line if narrow."""
    tagline = f"etl-craft {version}: metadata-driven ETL"
    if width < max(len(line) for line in _ART):
        return tagline + "\n"
    return "\n".join([*_ART, f"  {tagline}", ""]) + "\n"


def wanted(command: str | None, fmt: str, suppressed: bool, stream: TextIO) -> bool:
    if suppressed or command not in INTERACTIVE or fmt != "text":
        return False
    if os.environ.get(SUPPRESS_VARIABLE) or "NO_COLOR" in os.environ:
        return False
    if os.environ.get("TERM", "") in ("", "dumb"):
        return False
    return stream.isatty()


def show(command: str | None, fmt: str, suppressed: bool, stream: TextIO, version: str) -> None:
    """Print the banner when ``wanted``, once: the processes this one starts print none."""
    if not wanted(command, fmt, suppressed, stream):
        return
    width = shutil.get_terminal_size().columns  # COLUMNS, else the terminal's, else 80
    stream.write(banner(version, width))
    stream.flush()
    os.environ[SUPPRESS_VARIABLE] = "1"
