"""Write the generated reference pages and the logo files: `uv run python -m docs.generate`.

Each page is rendered from the code it documents, and the logo is copied from the shared library
(etl_craft.branding), the one copy the UI and the catalog use too; tests/unit/docs fails when a
committed file differs from what this renders now.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from docs.generator import cli, configuration, exit_codes, parameters, schema, transitions

from etl_craft.branding import FAVICON, WORDMARK, LogoName, logo

DOCS = Path(__file__).resolve().parent
COMMAND = "uv run python -m docs.generate"
PAGES: dict[str, Callable[[], str]] = {
    "reference/cli.md": cli.render,
    "reference/configuration.md": configuration.render,
    "reference/task-parameters.md": parameters.render,
    "reference/engine-db-schema.md": schema.render,
    "reference/exit-codes.md": exit_codes.render,
    "reference/transitions.md": transitions.render,
    f"img/{FAVICON}": lambda: _logo(FAVICON),
    f"img/{WORDMARK}": lambda: _logo(WORDMARK),
}


def _logo(name: LogoName) -> str:
    return logo(name).decode("utf-8")


def render_all() -> dict[Path, str]:
    return {DOCS / name: render() for name, render in PAGES.items()}


def main() -> int:
    for path, text in render_all().items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            sys.stdout.write(f"wrote {path.relative_to(DOCS.parent)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
