"""What an edit of a spec-defined pipeline does to its spec file, as the editor shows it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SpecChange:
    """The spec file that defines the edited pipeline, and the edit's change to it.

    ``diff`` is empty when the spec can't take the edit; ``refusal`` then says why, and what to
    do instead. A refused change still shows where the pipeline is defined.
    """

    file: str  # relative to the project folder, as pipelines/orders.yml
    diff: str  # a unified diff of the file
    refusal: str | None
    digest: str  # of the file's text the diff was made from: applying needs the same text
