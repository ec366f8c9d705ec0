"""Each generated reference page is committed as the generator renders it from today's code."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from docs.generate import COMMAND, DOCS, PAGES, render_all


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_committed_reference_is_what_the_generator_renders(name: str) -> None:
    path = DOCS / name
    rendered = render_all()[path]
    committed = path.read_text(encoding="utf-8") if path.is_file() else ""
    if committed != rendered:
        diff = "".join(
            difflib.unified_diff(
                committed.splitlines(keepends=True),
                rendered.splitlines(keepends=True),
                f"{_shown(path)} (committed)",
                f"{_shown(path)} (generated now)",
                n=1,
            )
        )
        pytest.fail(
            f"{_shown(path)} is stale: the code it documents changed. Regenerate it with "
            f"`{COMMAND}` and commit the result.\n{diff[:4000]}"
        )


def _shown(path: Path) -> str:
    return path.relative_to(DOCS.parent).as_posix()
