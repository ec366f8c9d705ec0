"""Land one client's support interactions that arrived after the stored offset.

INPUT_PARAMS: {"client": "alpha" | "beta" | "gamma", "folder": the client's export folder,
relative to the project, "target": the landing table}. Each client keeps its own offset:
Alpha the document sequence (INT), Beta the event time (TIMESTAMP), Gamma the last object
read (TEXT). A retried attempt first deletes what an earlier attempt of the same task run
landed, so a retry never doubles rows; the offset moves only when the attempt succeeds.
"""

import csv
import gzip
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult

PROJECT = Path(__file__).resolve().parents[1]
COLUMNS = (
    "source_position",
    "source_file",
    "interaction_id",
    "customer_id",
    "customer_type",
    "agent_id",
    "support_area",
    "channel",
    "opened_at",
    "handle_seconds",
    "status",
    "first_contact",
    "rating",
    "source_updated_at",
)
AUDIT = ("PIPELINE_ID", "PIPELINE_RUN_ID", "TASK_RUN_ID", "CREATE_DATE", "DELETE_FLAG")
CHUNK = 200

Row = dict[str, object]


def run(context: ScriptContext) -> ScriptResult:
    params = context.input_params
    folder = PROJECT / params["folder"]
    read = READERS[params["client"]]
    rows, offset = read(folder, context.offset)
    landed = land(context, params["target"], rows)
    context.log.info("landed %d row(s) from %s into %s", landed, folder, params["target"])
    return ScriptResult(row_count=landed, offset=offset)


def land(context: ScriptContext, target: str, rows: list[Row]) -> int:
    names = COLUMNS + AUDIT
    stamps = (
        context.pipeline_id,
        context.pipeline_run_id,
        context.task_run_id,
        datetime.now(UTC),
        "N",
    )
    with context.fenced_transaction() as warehouse:
        mark = warehouse.dialect.placeholder
        warehouse.execute(
            f"forget rows an earlier attempt landed in {target}",
            f"DELETE FROM {target} WHERE TASK_RUN_ID = {mark}",
            [context.task_run_id],
        )
        for start in range(0, len(rows), CHUNK):
            chunk = rows[start : start + CHUNK]
            values = ", ".join("(" + ", ".join([mark] * len(names)) + ")" for _ in chunk)
            params = [value for row in chunk for value in (*(row[c] for c in COLUMNS), *stamps)]
            warehouse.execute(
                f"land rows into {target}",
                f"INSERT INTO {target} ({', '.join(names)}) VALUES {values}",
                params,
            )
    return len(rows)


def _time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S")  # naive: the sources write UTC


def _number(text: str) -> int | None:
    return int(text) if text else None


def read_alpha(folder: Path, offset: int | None) -> tuple[list[Row], int | None]:
    """JSON documents, each with a sequence number the export assigns in order."""
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            document = json.loads(line)
            if offset is not None and document["seq"] <= offset:
                continue
            rows.append(
                {
                    "source_position": str(document["seq"]),
                    "source_file": path.name,
                    "interaction_id": document["_id"],
                    "customer_id": document["customer"]["id"],
                    "customer_type": document["customer"]["type"],
                    "agent_id": document["agent"],
                    "support_area": document["area"],
                    "channel": document["channel"],
                    "opened_at": _time(document["opened_at"]),
                    "handle_seconds": document["handle_seconds"],
                    "status": document["status"],
                    "first_contact": "Y" if document["first_contact"] else "N",
                    "rating": document["rating"],
                    "source_updated_at": _time(document["updated_at"]),
                }
            )
    newest = max((int(str(row["source_position"])) for row in rows), default=None)
    return rows, newest


def read_beta(folder: Path, offset: datetime | None) -> tuple[list[Row], datetime | None]:
    """Events in time order; the log redelivers some, which prs deduplicates."""
    rows, newest = [], offset
    for path in sorted(folder.glob("*.csv")):
        with path.open(newline="") as handle:
            for event in csv.DictReader(handle):
                when = _time(event["event_time"]).replace(tzinfo=UTC)
                if offset is not None and when <= offset:
                    continue
                newest = when if newest is None or when > newest else newest
                rows.append(
                    {
                        "source_position": event["event_offset"],
                        "source_file": path.name,
                        "interaction_id": event["interaction_ref"],
                        "customer_id": event["customer_id"] or None,
                        "customer_type": event["customer_type"],
                        "agent_id": event["agent_code"],
                        "support_area": event["support_area"],
                        "channel": event["channel"],
                        "opened_at": _time(event["opened"]),
                        "handle_seconds": int(event["duration_s"]),
                        "status": event["state"],
                        "first_contact": event["fcr"],
                        "rating": _number(event["csat"]),
                        "source_updated_at": when.replace(tzinfo=None),
                    }
                )
    return rows, newest


def read_gamma(folder: Path, offset: str | None) -> tuple[list[Row], str | None]:
    """Gzipped CSV objects, named so that their names sort in arrival order."""
    objects = [p for p in sorted(folder.glob("*.csv.gz")) if offset is None or p.name > offset]
    rows = [row for path in objects for row in _gamma_rows(path)]
    return rows, objects[-1].name if objects else None


def _gamma_rows(path: Path) -> Iterator[Row]:
    with gzip.open(path, "rt", newline="") as handle:
        for number, record in enumerate(csv.DictReader(handle), start=1):
            yield {
                "source_position": f"{path.name}:{number}",
                "source_file": path.name,
                "interaction_id": record["interaction_id"],
                "customer_id": record["customer"] or None,
                "customer_type": record["customer_kind"],
                "agent_id": record["agent"],
                "support_area": record["area_code"],
                "channel": record["channel"],
                "opened_at": _time(record["opened_at"]),
                "handle_seconds": int(record["handle_time_seconds"]),
                "status": record["status"],
                "first_contact": "Y" if record["resolved_first_contact"] == "1" else "N",
                "rating": _number(record["rating"]),
                "source_updated_at": _time(record["last_modified"]),
            }


READERS = {"alpha": read_alpha, "beta": read_beta, "gamma": read_gamma}
