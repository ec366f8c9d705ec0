"""etl-craft's logo: the one copy the web UI, the catalog site and the docs all use.

Two SVG files in ``logos/``: the square mark, every site's favicon, and the wordmark (the mark
and the name) for a page's header. They are package data, so an installed wheel carries them
and a service reads them from wherever it is installed.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Final, Literal

LogoName = Literal["favicon.svg", "wordmark.svg"]
FAVICON: Final = "favicon.svg"
WORDMARK: Final = "wordmark.svg"
LOGOS: Final[tuple[LogoName, ...]] = (FAVICON, WORDMARK)
MEDIA_TYPE: Final = "image/svg+xml"
# The folder of logos as (package, folder), the way Starlette's StaticFiles(packages=...) takes it.
LOGO_FOLDER: Final = (__name__, "logos")


def logo(name: LogoName) -> bytes:
    """The bytes of the logo file ``name``, one of `LOGOS`."""
    return files(__name__).joinpath("logos", name).read_bytes()
