"""The one path check every request goes through, whatever its method (B65).

The request's raw path is decoded once, here, and never again: `%2e%2e`, `%2f` and `%00` are
judged as what they decode to. A segment starting with `.` (hidden files, `.` and `..`) is
refused outright rather than normalised away, and what remains is resolved with its symbolic
links and must stay inside the release being served, so a link out of the site is refused too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote_to_bytes

INDEX = "index.html"


@dataclass(frozen=True)
class Found:
    """A file to send, or the path (beneath the prefix) a directory request is sent to."""

    file: Path | None = None
    redirect: str | None = None


def site_segments(raw_path: bytes, prefix: str) -> tuple[list[str], bool] | None:
    """The decoded segments beneath ``prefix`` (``/`` or ``/a/b/``) and whether the path ends
    with a slash; None for a path to refuse."""
    try:
        decoded = unquote_to_bytes(raw_path.decode("ascii")).decode("utf-8")
    except (UnicodeDecodeError, ValueError):
        return None
    if "\x00" in decoded or "\\" in decoded or not decoded.startswith("/"):
        return None
    if decoded == prefix.rstrip("/"):
        return [], False  # the prefix itself, without its final slash: a directory
    if not decoded.startswith(prefix):
        return None
    rest = decoded[len(prefix) :]
    segments = [segment for segment in rest.split("/") if segment]
    if any(segment.startswith(".") for segment in segments):
        return None
    return segments, rest == "" or rest.endswith("/")


def locate(root: Path, segments: list[str], slash: bool, prefix: str) -> Found | None:
    """What ``segments`` name inside the release ``root``, symbolic links resolved."""
    real_root = Path(os.path.realpath(root))
    target = _inside(real_root, real_root.joinpath(*segments))
    if target is None:
        return None
    if target.is_dir():
        if not slash:
            return Found(redirect=prefix + "".join(f"{segment}/" for segment in segments))
        index = _inside(real_root, target / INDEX)
        return Found(file=index) if index and index.is_file() else None
    if slash or not target.is_file():
        return None
    return Found(file=target)


def _inside(real_root: Path, path: Path) -> Path | None:
    # realpath, not resolve(): it never raises on a loop or a missing part, it just resolves.
    real = Path(os.path.realpath(path))
    return real if real == real_root or real.is_relative_to(real_root) else None
