"""The quick start as the README writes it, run with the installed etl-craft, and what to expect.

What the pipelines must produce is derived from what the demo's sources wrote, batch by batch
(etl_craft.operations.demo.sources describes every row of every batch).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from etl_craft.operations.demo.sources import CLIENTS, Interaction, batch_versions, source_rows
from tests.fixtures.processes import ETL_CRAFT, clean_env

README = Path(__file__).resolve().parents[3] / "README.md"
PIPELINES = ("si_reference", "si_client_alpha", "si_client_beta", "si_client_gamma", "si_transform")
AREA_NAMES = {
    "BILL": "Billing and payments",
    "TECH": "Technical support",
    "ACCT": "Account management",
    "SHIP": "Shipping and delivery",
    "RETN": "Returns and refunds",
}
Key = tuple[str, str]  # (source_system, interaction_id)


def quick_start_arguments() -> list[str]:
    """The etl-craft arguments of the README's one command (after `uv run ... etl-craft`)."""
    block = re.search(r"## Try it.*?```bash\n(.+?)\n```", README.read_text(), re.DOTALL)
    assert block is not None, "the README has no bash block under ## Try it"
    command = block.group(1).strip()
    assert command.startswith("pip install uv && uv run "), command
    words = command.split()
    return words[words.index("etl-craft") + 1 :]


def run_etl_craft(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    clean = clean_env()
    return subprocess.run(
        [str(ETL_CRAFT), *args],
        cwd=cwd,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def key(version: Interaction) -> Key:
    return version.client.upper(), version.interaction_id


def versions(batches: int) -> Iterator[Interaction]:
    """Every version the sources wrote, oldest batch first."""
    for batch in range(1, batches + 1):
        for client in CLIENTS:
            yield from batch_versions(client, batch)


@dataclass(frozen=True)
class Expected:
    """What the warehouse holds after the demo ran once per batch."""

    batches: int

    def landed(self, client: str) -> int:
        return sum(len(source_rows(client, b)) for b in range(1, self.batches + 1))

    def latest(self) -> dict[Key, Interaction]:
        return {key(version): version for version in versions(self.batches)}

    def prs_rows(self) -> int:
        return len({(key(v), v) for v in versions(self.batches)})

    def dm_current(self) -> dict[Key, Interaction]:
        return {k: v for k, v in self.latest().items() if v.breaks is None}

    def dm_rows(self) -> int:
        return sum(1 for version in versions(self.batches) if version.breaks is None)
