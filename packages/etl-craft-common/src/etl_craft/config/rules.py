"""What each key of craft-connector.yml accepts: one parser per key, and the defaults."""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from etl_craft.config.alerts import Alerts, channel_specs
from etl_craft.config.project import relative_path_problem
from etl_craft.config.providers import ProviderKind, ProviderSettings
from etl_craft.config.secrets import VARIABLE_PATTERN, VARIABLE_RULE, template_problem
from etl_craft.core import ranges
from etl_craft.core.cron import cron_problem
from etl_craft.core.enums import Role
from etl_craft.core.ranges import Range
from etl_craft.core.redaction import SENSITIVE_PATTERNS
from etl_craft.core.text import CODE_RULE, ROLE_RULE, is_code, is_role_name
from etl_craft.stores import store_url_problem

# A parser returns the value it accepts or raises ValueError("expected ...").
Parser = Callable[[object], object]

MEMORY_DATABASE = ":memory:"
# The PostgreSQL role whose members may write etl-craft's tables besides their owner.
DEFAULT_WRITER_ROLE = "etl_craft_writer"
# Any key ending so names an environment variable that holds a secret.
VARIABLE_SUFFIX = "_variable"


class WarehouseType(StrEnum):
    POSTGRESQL = "postgresql"
    DUCKDB = "duckdb"
    ICEBERG = "iceberg"
    SNOWFLAKE = "snowflake"
    SPARK = "spark"


class OrchestrationMode(StrEnum):
    LOCAL = "local"  # etl-craft schedules and gates its runs
    REMOTE = "remote"  # an external orchestrator (Airflow) decides; etl-craft executes


class GatePolicy(StrEnum):
    """How a local run treats its dependencies on other pipelines (Dependency_gates)."""

    ENFORCE = "enforce"  # wait for them, skip what they refuse
    WARN = "warn"  # judge them once; one that is not met is logged and counted as met
    OFF = "off"  # never judged: every one counts as met

    @property
    def enforced(self) -> bool:
        return self is GatePolicy.ENFORCE


class TlsMode(StrEnum):
    STARTTLS = "starttls"
    SSL = "ssl"
    NONE = "none"


def text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("expected non-empty text")
    return value


@dataclass(frozen=True)
class bounded:  # noqa: N801 - a parser, named like the others
    """A number within one of core.ranges."""

    allowed: Range

    def __call__(self, value: object) -> object:
        if self.allowed.problem(value) is not None:
            raise ValueError(self.allowed.expectation)
        return value


def flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def one_of(choices: Iterable[str]) -> Parser:
    options = [str(choice) for choice in choices]

    def parse(value: object) -> str:
        if value not in options:
            raise ValueError(f"expected one of {', '.join(options)}{suggestion(value, options)}")
        return str(value)

    return parse


def gate_policy(value: object) -> str:
    # YAML reads a bare off as false: that is what someone writing it meant.
    return str(one_of(GatePolicy)(GatePolicy.OFF.value if value is False else value))


def suggestion(value: object, options: Iterable[str]) -> str:
    """' (did you mean X?)' for the nearest option, compared without case, or ''."""
    by_lower = {option.lower(): option for option in options}
    close = difflib.get_close_matches(str(value).lower(), list(by_lower), n=1)
    return f" (did you mean {by_lower[close[0]]}?)" if close else ""


def timezone_name(value: object) -> str:
    try:
        ZoneInfo(text(value))
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError("expected an IANA time zone name such as UTC or Europe/Paris") from error
    return str(value)


def code(value: object) -> str:
    if not isinstance(value, str) or not is_code(value):
        raise ValueError(f"expected a code: {CODE_RULE}")
    return value


def role_name(value: object) -> str:
    if not isinstance(value, str) or not is_role_name(value):
        raise ValueError(f"expected a PostgreSQL role name: {ROLE_RULE}")
    return value


def variable_name(value: object) -> str:
    if not isinstance(value, str) or not VARIABLE_PATTERN.fullmatch(value):
        raise ValueError(f"expected {VARIABLE_RULE}, never the secret itself")
    return value


def url_template(value: object) -> str:
    problem = template_problem(text(value))
    if problem:
        raise ValueError(problem)
    if _inline_password(str(value)):
        raise ValueError(
            "expected a ${VARIABLE} in place of the password written out, with the variable "
            "set in the environment or the project's .env"
        )
    return str(value)


def _inline_password(template: str) -> bool:
    if "@" not in template:
        return False  # no user information, so no password
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        password = make_url(template).password
    except ArgumentError:
        # The whole URL comes from a variable, so nothing secret is written in the file.
        return False
    return bool(password) and "${" not in str(password)


def project_path(value: object) -> str:
    problem = relative_path_problem(text(value))
    if problem:
        raise ValueError(problem)
    return str(value)


def database_path(value: object) -> str:
    return MEMORY_DATABASE if value == MEMORY_DATABASE else project_path(value)


def any_path(value: object) -> str:
    """A file that may live outside the project, such as a system CA bundle."""
    path = text(value)
    if PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute():
        return path
    return project_path(path)


GLOB_PATTERN = re.compile(r"[A-Za-z0-9_*?\[\]!-]+")


def glob_patterns(value: object) -> list[str]:
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(item, str) and GLOB_PATTERN.fullmatch(item) for item in value)
    ):
        raise ValueError(
            "expected a list of glob patterns over parameter names (letters, digits, _, -, "
            'and the wildcards * ? [ ]), such as ["*TOKEN*", "*SECRET*"]; write the list '
            "in brackets or as indented '- pattern' lines"
        )
    return [str(item).upper() for item in value]


def email_address(value: object) -> str:
    local, at, domain = text(value).rpartition("@")
    if not at or not local or "." not in domain:
        raise ValueError("expected an email address such as etl@example.com")
    return str(value)


def cron_schedule(value: object) -> str:
    problem = cron_problem(text(value))
    if problem:
        raise ValueError(f"expected a cron expression that fires, such as @daily ({problem})")
    return str(value)


def address_ranges(value: object) -> list[str]:
    """IP addresses or CIDR ranges (IPv4 or IPv6), each kept in its normal form."""
    expectation = (
        "expected a list of IP addresses or CIDR ranges such as [10.0.0.0/8, 192.0.2.7, "
        "2001:db8::/32], in brackets or as indented '- range' lines"
    )
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(expectation)
    ranges = []
    for item in value:
        try:
            ranges.append(str(ipaddress.ip_network(item.strip(), strict=False)))
        except ValueError:
            raise ValueError(f"{item!r} is not an address or range; {expectation}") from None
    return ranges


def public_base_url(value: object) -> str:
    """An http(s) URL with a host and an optional path prefix, written with a final slash."""
    parts = urlsplit(text(value).strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            "expected the catalog's external URL, such as https://data.example.com/catalog/"
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(
            "expected a URL without query, fragment or credentials, such as "
            "https://data.example.com/catalog/"
        )
    if any(segment.startswith(".") for segment in parts.path.split("/")):
        raise ValueError("expected a path prefix whose segments do not start with '.'")
    path = parts.path.rstrip("/") + "/"
    return f"{parts.scheme}://{parts.netloc.lower()}{path}"


NEVER = "never"
CLOCK_TIME = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")


def days_or_never(value: object) -> object:
    if value == NEVER or ranges.RETENTION_DAYS.problem(value) is None:
        return value
    raise ValueError(f"expected {NEVER} or {ranges.RETENTION_DAYS.expectation[len('expected ') :]}")


def clock_time(value: object) -> str:
    if not isinstance(value, str) or not CLOCK_TIME.fullmatch(value):
        raise ValueError('expected a time of day as HH:MM on a 24-hour clock, such as "03:00"')
    return value


def group_roles(value: object) -> dict[str, str]:
    roles = [role.value for role in Role]
    if not isinstance(value, dict) or not all(
        isinstance(group, str) and group.strip() and role in roles for group, role in value.items()
    ):
        raise ValueError(
            f"expected a mapping of group names to roles ({', '.join(roles)}), such as "
            "{etl-admins: admin, data-team: developer}"
        )
    return {str(group): str(role) for group, role in value.items()}


def service_url(value: object) -> str:
    parts = urlsplit(text(value).strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.password:
        raise ValueError(
            "expected the service's http(s) address without credentials, such as "
            "https://vault.example.com:8200"
        )
    return str(value).strip()


def store_url(value: object) -> str:
    problem = store_url_problem(text(value).strip())
    if problem is not None:
        raise ValueError(problem)
    return str(value).strip().rstrip("/")


STORE_KEYS: dict[str, Parser] = {"store": store_url, "endpoint_url": service_url, "region": text}


def host_name(value: object) -> str:
    name = text(value).strip().lower()
    if "/" in name or ":" in name or " " in name or "." not in name:
        raise ValueError("expected a host name such as catalog.example.com, without scheme or path")
    return name


KEYS: dict[str, dict[str, Parser]] = {
    "Engine": {"url": url_template, "path": project_path, "writer_role": role_name},
    "Warehouse": {
        "type": one_of(WarehouseType),
        "url": url_template,
        "path": database_path,
        "ledger_schema": code,
        "max_queries": bounded(ranges.CONNECTIONS),
        "location": text,
        "catalog_name": code,
        # Snowflake (WAREHOUSE_FORMS says which keys each type takes).
        "account": text,
        "user": text,
        "role": text,
        "warehouse": text,
        "database": code,
        "schema": code,
        "password_variable": variable_name,
        "key_file": any_path,
        "private_key_passphrase_variable": variable_name,
        "remote": text,
        "token_variable": variable_name,
        "scratch_schema": code,
    },
    "Email": {
        "host": text,
        "port": bounded(ranges.PORT),
        "tls_mode": one_of(TlsMode),
        "username": text,
        "password_variable": variable_name,
        "from_address": email_address,
        "ca_file": any_path,
        "verify": flag,
    },
    "Orchestration": {
        "timezone": timezone_name,
        "max_parallel_tasks": bounded(ranges.PARALLEL_TASKS),
        "retries": bounded(ranges.RETRIES),
        "shutdown_grace_seconds": bounded(ranges.SECONDS),
        "lease_seconds": bounded(ranges.TIMEOUT_SECONDS),
        "gate_wait_minutes": bounded(ranges.MINUTES),
        "project": code,
        "mode": one_of(OrchestrationMode),
        "dependency_gates": gate_policy,
        "db_pool_size": bounded(ranges.POOL_CONNECTIONS),
    },
    "Redaction": {"sensitive_patterns": glob_patterns},
    "Docs_site": {
        "schedule": cron_schedule,
        "output": project_path,
        "host": text,
        "port": bounded(ranges.PORT),
        "base_url": public_base_url,
        "trusted_proxies": address_ranges,
        "allowed_ips": address_ranges,
        "ngrok_authtoken_variable": variable_name,
        "ngrok_domain": host_name,
    },
    "Retention": {
        "run_history_days": bounded(ranges.RETENTION_DAYS),
        "attempt_log_days": bounded(ranges.RETENTION_DAYS),
        "consumption_days": bounded(ranges.RETENTION_DAYS),
        "interventions_days": days_or_never,
        "daily_at": clock_time,
        "batch_rows": bounded(ranges.PURGE_BATCH_ROWS),
    },
    "Cloning": {
        "schema": code,
        "every_minutes": bounded(ranges.EVERY_MINUTES),
        "lock_wait_seconds": bounded(ranges.SECONDS),
        "overlap_seconds": bounded(ranges.SECONDS),
    },
    "Alerts": {
        "channels": channel_specs,
        "lookback_minutes": bounded(ranges.SLA_MINUTES),
        "retry_seconds": bounded(ranges.TIMEOUT_SECONDS),
        "links_base_url": public_base_url,
        "gate_wait_minutes": bounded(ranges.SLA_MINUTES),
    },
    "Secrets": {
        "provider": one_of(ProviderKind),
        "cache_seconds": bounded(ranges.SECONDS),
        "url": service_url,
        "region": text,
        "prefix": text,
        "mount": text,
        "path": text,
        "token_variable": variable_name,
    },
    "Logs": {**STORE_KEYS, "tail_bytes": bounded(ranges.LOG_TAIL_BYTES)},
    "Artifacts": dict(STORE_KEYS),
    "Auth": {
        "oidc_issuer": service_url,
        "oidc_client_id": text,
        "oidc_client_secret_variable": variable_name,
        "oidc_default_role": one_of(Role),
        "oidc_group_roles": group_roles,
        "oidc_groups_claim": text,
        "oidc_scopes": text,
        "oidc_redirect_url": service_url,
    },
}

DEFAULTS: dict[str, dict[str, object]] = {
    "Engine": {"writer_role": DEFAULT_WRITER_ROLE},
    "Warehouse": {"ledger_schema": "etl_craft"},
    "Email": {"tls_mode": TlsMode.STARTTLS.value, "verify": True},
    "Orchestration": {
        "timezone": "UTC",
        "max_parallel_tasks": 4,
        "retries": 0,
        "shutdown_grace_seconds": 60,
        "lease_seconds": 60,
        "gate_wait_minutes": 60,
        "project": "default",
        "mode": OrchestrationMode.LOCAL.value,
        "dependency_gates": GatePolicy.ENFORCE.value,
    },
    "Redaction": {"sensitive_patterns": list(SENSITIVE_PATTERNS)},
    "Docs_site": {
        "schedule": "@daily",
        "output": "catalog",
        "host": "127.0.0.1",
        "port": 8732,
        "trusted_proxies": [],
        "allowed_ips": [],
    },
    "Retention": {
        "run_history_days": 400,
        "attempt_log_days": 90,
        "consumption_days": 400,
        "interventions_days": NEVER,
        "daily_at": "03:00",
        "batch_rows": 10_000,
    },
    "Cloning": {
        "schema": "aud_mirror",
        "every_minutes": 15,
        "lock_wait_seconds": 60,
        "overlap_seconds": 600,
    },
    "Alerts": {
        "lookback_minutes": Alerts.lookback_minutes,
        "retry_seconds": Alerts.retry_seconds,
        "gate_wait_minutes": Alerts.gate_wait_minutes,
    },
    "Secrets": {
        "provider": ProviderSettings.kind.value,
        "cache_seconds": ProviderSettings.cache_seconds,
        "mount": ProviderSettings.mount,
        "token_variable": ProviderSettings.token_variable,
    },
    "Logs": {"tail_bytes": 8 * 1024},
    "Artifacts": {},
    "Auth": {
        "oidc_default_role": Role.VIEWER.value,
        "oidc_group_roles": {},
        "oidc_groups_claim": "groups",
        "oidc_scopes": "openid profile email",
    },
}

REQUIRED_SECTIONS = ("Engine", "Warehouse")
