"""A catalog site is built beside the one being served and swapped in whole.

`DIR` (the site's path) is a symbolic link to one release under a hidden sibling folder,
`.DIR.releases/<stamp>/`. A build writes a new release there, then replaces the link in one
`rename`, so a visitor reads either the old site or the new one, never a half-written mix. The
previous release is kept so that requests already reading it finish; older ones are removed.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from etl_craft.core.errors import UsageError

KEPT_RELEASES = 2


def releases_folder(site: Path) -> Path:
    return site.parent / f".{site.name}.releases"


def current_release(site: Path) -> Path:
    """The release a request should read now (resolved once per request by a server)."""
    return Path(os.path.realpath(site))


def publish(site: Path, write: Callable[[Path], object]) -> Path:
    """Writes a new release with `write(folder)` and makes `site` point at it; returns the folder.

    A failing `write` leaves the served site as it was and removes its partial release.
    """
    _refuse_foreign_folder(site)
    folder = releases_folder(site) / _release_name()
    folder.mkdir(parents=True)
    try:
        write(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    _swap(site, folder)
    _remove_old_releases(site)
    return folder


def _release_name() -> str:
    return f"{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}-{uuid.uuid4().hex[:8]}"


def _refuse_foreign_folder(site: Path) -> None:
    if site.is_symlink() or not site.exists():
        return
    if site.is_dir() and not any(site.iterdir()):
        site.rmdir()
        return
    raise UsageError(
        f"the catalog output {site} is a {'folder' if site.is_dir() else 'file'} that etl-craft "
        "did not build (a built site links to a release folder, so it can be swapped in whole); "
        "choose another --output, or move it away and build again"
    )


def _swap(site: Path, folder: Path) -> None:
    link = site.parent / f".{site.name}.{uuid.uuid4().hex[:8]}.link"
    link.symlink_to(os.path.relpath(folder, site.parent), target_is_directory=True)
    link.replace(site)


def _remove_old_releases(site: Path) -> None:
    releases = sorted(path for path in releases_folder(site).iterdir() if path.is_dir())
    for old in releases[:-KEPT_RELEASES]:
        shutil.rmtree(old, ignore_errors=True)
