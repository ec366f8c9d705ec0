"""The typed sections of craft-connector.yml, built from one profile's merged values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import time
from pathlib import Path, PurePosixPath, PureWindowsPath
from zoneinfo import ZoneInfo

from etl_craft.config.document import Problem, Problems
from etl_craft.config.project import Project
from etl_craft.config.providers import ProviderKind, ProviderSettings, remote_provider
from etl_craft.config.rules import (
    DEFAULTS,
    MEMORY_DATABASE,
    NEVER,
    VARIABLE_SUFFIX,
    GatePolicy,
    OrchestrationMode,
    TlsMode,
    WarehouseType,
)
from etl_craft.config.secrets import SecretResolver, UnresolvedSecretError
from etl_craft.config.urls import query_credential_problem, url_secrets
from etl_craft.core.errors import ConfigurationError
from etl_craft.core.redaction import SENSITIVE_PATTERNS
from etl_craft.stores import StoreSettings

DEFAULT_PORTS = {TlsMode.STARTTLS: 587, TlsMode.SSL: 465, TlsMode.NONE: 25}
URL_FORM = "an SQLAlchemy URL such as postgresql+psycopg://etl@db.example.com/etl"


@dataclass(frozen=True)
class Warehouse:
    type: WarehouseType
    # Resolved, so it may hold a password: kept out of repr and therefore out of logs.
    url: str | None = field(repr=False)
    path: str | None  # an absolute file path, or ":memory:"
    ledger_schema: str
    max_queries: int | None
    # The type's own keys (see WAREHOUSE_FORMS), as written.
    options: Mapping[str, str] = field(default_factory=dict)
    # Resolved ``*_variable`` keys by the name without the suffix: kept out of repr and logs.
    secrets: Mapping[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Email:
    host: str
    port: int
    tls_mode: TlsMode
    username: str | None
    password_variable: str | None
    password: str | None = field(repr=False)
    from_address: str
    ca_file: Path | None
    verify: bool
    # Why the password is missing (its variable is unset): only sending mail needs it.
    password_problem: str | None = None

    def require_password(self) -> None:
        if self.password_problem is not None:
            raise ConfigurationError(f"cannot send alert mail: {self.password_problem}")


@dataclass(frozen=True)
class Orchestration:
    timezone: str
    max_parallel_tasks: int
    retries: int
    shutdown_grace_seconds: int
    lease_seconds: int
    gate_wait_minutes: int  # how long a gate waits for a fresh upstream run before giving up
    project: str
    mode: OrchestrationMode = OrchestrationMode.LOCAL
    dependency_gates: GatePolicy = GatePolicy.ENFORCE
    # The Engine DB connections this process's engine pools; None: its kind decides
    # (enginedb/pool_budget).
    db_pool_size: int | None = None

    @property
    def remote(self) -> bool:
        return self.mode is OrchestrationMode.REMOTE

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


@dataclass(frozen=True)
class Redaction:
    sensitive_patterns: tuple[str, ...]  # upper case: names are matched without case


@dataclass(frozen=True)
class DocsSite:
    """Where the catalog site is built, when it is rebuilt, and how it is served."""

    schedule: str
    output: Path
    host: str
    port: int
    base_url: str | None  # normalised with a final slash; its path is the served prefix
    trusted_proxies: tuple[str, ...]
    allowed_ips: tuple[str, ...]  # empty: every visitor
    ngrok_authtoken_variable: str | None
    ngrok_domain: str | None
    ngrok_authtoken: str | None = field(default=None, repr=False)
    # Why the authtoken is missing (its variable is unset): only --ngrok needs it.
    ngrok_authtoken_problem: str | None = None


@dataclass(frozen=True)
class Auth:
    """How people sign in to the web UI besides a password: the OpenID provider, if any."""

    oidc_issuer: str | None  # None: no single sign-on
    oidc_client_id: str | None
    oidc_default_role: str
    oidc_group_roles: dict[str, str]  # a value of the groups claim -> the role it gives
    oidc_groups_claim: str
    oidc_scopes: str  # space-separated, as the authorization request sends them
    oidc_redirect_url: str | None  # None: the UI's own address as the request names it
    oidc_client_secret: str | None = field(default=None, repr=False)

    @property
    def oidc(self) -> bool:
        return self.oidc_issuer is not None and self.oidc_client_id is not None


@dataclass(frozen=True)
class Retention:
    """How long history stays in the Engine DB, and when the overseer purges the rest."""

    run_history_days: int
    attempt_log_days: int
    consumption_days: int
    interventions_days: int | None  # None: interventions are kept for ever
    daily_at: time  # in the project's time zone
    batch_rows: int


@dataclass(frozen=True)
class Logs:
    """Where attempt logs go once their attempts end, and how much of each TASK_LOG keeps."""

    store: StoreSettings | None  # None: each log stays where its owner wrote it
    tail_bytes: int


@dataclass(frozen=True)
class Cloning:
    """The AUD_ tables mirrored into a warehouse schema by the overseer and etl-craft clone."""

    schema: str
    every_minutes: int
    lock_wait_seconds: int  # a clone that can't take the clone lock this soon skips its turn
    # Rows written this long before the watermark are read again: a transaction that took a
    # stamp before the last clone read and committed after it is copied by the next.
    overlap_seconds: int


@dataclass
class SectionView:
    """One section with the selected profile applied: its valid values and their lines."""

    name: str
    line: int
    path: Path
    problems: Problems
    values: dict[str, object] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    # Keys already reported as bad: they are neither "missing" nor used.
    invalid: set[str] = field(default_factory=set)
    secrets: dict[str, str] = field(default_factory=dict)
    # Secrets whose variable is unset: not a load failure, since only some commands use them.
    missing: dict[str, Problem] = field(default_factory=dict)

    def report(self, key: str | None, message: str) -> None:
        line = self.lines.get(key, self.line) if key else self.line
        subject = f"{self.name}.{key}" if key else self.name
        self.problems.add(self.path, line, f"{subject} {message}")

    def text(self, key: str) -> str | None:
        value = self.values.get(key)
        return value if isinstance(value, str) else None

    def number(self, key: str) -> int | None:
        value = self.values.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def filled_text(self, key: str) -> str:
        """A key with a default: the loader filled it, so absence is a bug, not a user error."""
        value = self.text(key)
        if value is None:
            raise LookupError(f"{self.name}.{key} has no value and no default")
        return value

    def filled_number(self, key: str) -> int:
        value = self.number(key)
        if value is None:
            raise LookupError(f"{self.name}.{key} has no value and no default")
        return value

    def flag(self, key: str) -> bool:
        return self.values.get(key) is True

    def require(self, key: str, expectation: str) -> bool:
        if key in self.values:
            return True
        if key not in self.invalid:
            self.report(key, f"is missing; expected {expectation}")
        return False

    def resolve_secrets(self, resolver: SecretResolver) -> None:
        """Look up every ``*_variable`` key, so a new secret key needs no new code here."""
        for key, variable in self.values.items():
            if not key.endswith(VARIABLE_SUFFIX) or not isinstance(variable, str):
                continue
            try:
                self.secrets[key] = resolver.resolve(variable)
            except UnresolvedSecretError as error:
                line = self.lines.get(key, self.line)
                message = f"{self.name}.{key} names {variable}, {error}"
                self.missing[key] = Problem(self.path, line, message)

    def resolved_url(self, key: str, resolver: SecretResolver) -> str | None:
        template = self.text(key)
        if template is None:
            return None
        resolved, failures = resolver.substitute(template)
        for failure in failures:
            self.report(key, f"refers to {failure}")
        if failures or not self._is_url(key, template, resolved):
            return None
        refused = query_credential_problem(resolved)
        if refused is not None:
            self.report(key, refused)
            return None
        for secret in url_secrets(resolved):
            resolver.remember(secret)
        return resolved

    def _is_url(self, key: str, template: str, resolved: str) -> bool:
        # Checked only once resolved: `${HOST}` or a whole `${DATABASE_URL}` is not a URL yet.
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            make_url(resolved)
        except ArgumentError:
            self.report(key, f"is {template!r}; expected {URL_FORM}")
            return False
        return True


def build_engine_url(view: SectionView, resolver: SecretResolver, project: Project) -> str | None:
    url, path = view.text("url"), view.text("path")
    if url is not None and path is not None:
        view.report(
            None,
            "sets both url and path; expected one of them "
            "(a profile clears the other one with path: null or url: null)",
        )
        return None
    if path is not None:
        return f"sqlite:///{project.resolve(path)}"
    if url is None:
        if not view.invalid:
            view.report(
                None,
                f"sets neither url nor path; expected url: ({URL_FORM}) "
                f"or path: (a SQLite file in the project such as engine.db)",
            )
        return None
    return view.resolved_url("url", resolver)


@dataclass(frozen=True)
class WarehouseForm:
    """The keys one warehouse type takes, as data: a new warehouse adds a row, not code.

    ``url`` is resolved as a URL template and ``path`` as a file in the project; every other key
    is kept as written in ``Warehouse.options``, and a ``*_variable`` key's resolved secret in
    ``Warehouse.secrets`` under the name without the suffix.
    """

    required: tuple[tuple[str, str], ...]  # (key, what is expected)
    optional: tuple[str, ...] = ()


# Keys every warehouse type takes.
_COMMON_WAREHOUSE_KEYS = frozenset({"type", "ledger_schema", "max_queries"})

WAREHOUSE_FORMS: dict[WarehouseType, WarehouseForm] = {
    WarehouseType.POSTGRESQL: WarehouseForm(required=(("url", URL_FORM),)),
    WarehouseType.DUCKDB: WarehouseForm(
        required=(("path", "a DuckDB file in the project such as warehouse.duckdb, or :memory:"),),
    ),
    # The catalog is a PostgreSQL database (url) or a SQLite file (path): one of them.
    WarehouseType.ICEBERG: WarehouseForm(
        required=(), optional=("url", "path", "location", "catalog_name")
    ),
    WarehouseType.SNOWFLAKE: WarehouseForm(
        required=(
            ("account", "the account identifier such as myorg-myaccount"),
            ("user", "the service user's name"),
            ("database", "the database etl-craft writes, such as ANALYTICS"),
        ),
        optional=(
            "role",
            "warehouse",
            "schema",
            "password_variable",
            "key_file",
            "private_key_passphrase_variable",
            # Another endpoint than the account's own, such as https://host:443 (a private
            # link) or an emulator's http://127.0.0.1:port.
            "url",
        ),
    ),
    WarehouseType.SPARK: WarehouseForm(
        required=(("remote", "a Spark Connect address such as sc://spark-host:15002"),),
        optional=("token_variable", "scratch_schema"),
    ),
}


def build_warehouse(
    view: SectionView, resolver: SecretResolver, project: Project
) -> Warehouse | None:
    if not view.require("type", " or ".join(WarehouseType)):
        return None
    kind = WarehouseType(view.filled_text("type"))
    form = WAREHOUSE_FORMS[kind]
    taken = _COMMON_WAREHOUSE_KEYS | {key for key, _ in form.required} | set(form.optional)
    unwanted = sorted(key for key in view.values if key not in taken)
    if unwanted:
        takes = ", ".join(sorted(taken - _COMMON_WAREHOUSE_KEYS))
        view.report(
            unwanted[0], f"is set, but a {kind} warehouse takes {takes}; remove {unwanted[0]}"
        )
        return None
    # Each missing key is reported, not only the first.
    present = [view.require(key, expectation) for key, expectation in form.required]
    if not all(present):
        return None
    path = view.text("path")
    if path is not None and path != MEMORY_DATABASE:
        path = str(project.resolve(path))
    url = view.resolved_url("url", resolver)
    if "url" in view.values and url is None:
        return None
    plain = ("url", "path", *_COMMON_WAREHOUSE_KEYS)
    options = {
        key: str(value)
        for key, value in view.values.items()
        if key not in plain and not key.endswith(VARIABLE_SUFFIX)
    }
    secrets = {key.removesuffix(VARIABLE_SUFFIX): value for key, value in view.secrets.items()}
    return Warehouse(
        type=kind,
        url=url,
        path=path,
        ledger_schema=view.filled_text("ledger_schema"),
        max_queries=view.number("max_queries"),
        options=options,
        secrets=secrets,
    )


def build_email(view: SectionView, project: Project) -> Email | None:
    has_host = view.require("host", "the SMTP server's host name such as smtp.example.com")
    has_sender = view.require("from_address", "the sender's address such as etl@example.com")
    host, from_address = view.text("host"), view.text("from_address")
    if not (has_host and has_sender) or host is None or from_address is None:
        return None
    tls_mode = TlsMode(view.filled_text("tls_mode"))
    ca_file = view.text("ca_file")
    return Email(
        host=host,
        port=view.number("port") or DEFAULT_PORTS[tls_mode],
        tls_mode=tls_mode,
        username=view.text("username"),
        password_variable=view.text("password_variable"),
        password=view.secrets.get("password_variable"),
        password_problem=_problem_text(view.missing.get("password_variable")),
        from_address=from_address,
        ca_file=None if ca_file is None else _file_path(ca_file, project),
        verify=view.flag("verify"),
    )


def _problem_text(problem: Problem | None) -> str | None:
    return None if problem is None else str(problem)


def _file_path(written: str, project: Project) -> Path:
    if PurePosixPath(written).is_absolute() or PureWindowsPath(written).is_absolute():
        return Path(written)
    return project.resolve(written)


def build_secrets(view: SectionView | None) -> ProviderSettings | None:
    """The provider's settings, or None when a setting it needs is missing (reported)."""
    if view is None:
        return ProviderSettings()
    kind = ProviderKind(view.filled_text("provider"))
    settings = ProviderSettings(
        kind=kind,
        cache_seconds=view.filled_number("cache_seconds"),
        url=view.text("url"),
        region=view.text("region"),
        prefix=view.text("prefix") or "",
        mount=view.filled_text("mount"),
        path=view.text("path"),
        token_variable=view.filled_text("token_variable"),
    )
    needed = _PROVIDER_NEEDS.get(kind, {})
    present = [view.require(key, expectation) for key, expectation in needed.items()]
    return settings if all(present) else None


_PROVIDER_NEEDS = {
    ProviderKind.AWS: {"region": "the AWS region of the secrets, such as eu-west-1"},
    ProviderKind.VAULT: {
        "url": "Vault's address, such as https://vault.example.com:8200",
        "path": "the KV version 2 secret whose keys are the variables, such as etl-craft/prod",
    },
}


def secrets_resolver(
    settings: ProviderSettings, view: SectionView | None, local: SecretResolver
) -> SecretResolver | None:
    """What resolves the other sections' variables: ``local`` (the environment and .env) for
    the env provider, else the remote provider, whose own credential ``local`` resolves."""
    if settings.kind is ProviderKind.ENV or view is None:
        return local
    token = None
    if settings.kind is ProviderKind.VAULT:
        try:
            token = local.resolve(settings.token_variable)
        except UnresolvedSecretError as error:
            view.report("token_variable", f"names {settings.token_variable}, {error}")
            return None
    try:
        return SecretResolver([remote_provider(settings, token)])
    except ConfigurationError as error:
        view.report("provider", f"is {settings.kind}, but {error}")
        return None


def build_orchestration(view: SectionView) -> Orchestration:
    return Orchestration(
        timezone=view.filled_text("timezone"),
        max_parallel_tasks=view.filled_number("max_parallel_tasks"),
        retries=view.filled_number("retries"),
        shutdown_grace_seconds=view.filled_number("shutdown_grace_seconds"),
        lease_seconds=view.filled_number("lease_seconds"),
        gate_wait_minutes=view.filled_number("gate_wait_minutes"),
        project=view.filled_text("project"),
        mode=OrchestrationMode(view.filled_text("mode")),
        dependency_gates=GatePolicy(view.filled_text("dependency_gates")),
        db_pool_size=view.number("db_pool_size"),
    )


def build_redaction(view: SectionView | None) -> Redaction:
    # Absent, the section is its defaults; it stays out of the fingerprint then, so that
    # projects written before it existed keep theirs.
    patterns = view.values.get("sensitive_patterns") if view else None
    if not isinstance(patterns, list):
        return Redaction(sensitive_patterns=SENSITIVE_PATTERNS)
    return Redaction(sensitive_patterns=tuple(str(pattern) for pattern in patterns))


def build_docs_site(view: SectionView | None, project: Project) -> DocsSite:
    # Absent, the section is its defaults, and stays out of the fingerprint like Redaction.
    values = view.values if view else dict(DEFAULTS["Docs_site"])

    def words(key: str) -> tuple[str, ...]:
        found = values.get(key)
        return tuple(str(item) for item in found) if isinstance(found, list) else ()

    def optional(key: str) -> str | None:
        found = values.get(key)
        return found if isinstance(found, str) else None

    port = values.get("port")
    return DocsSite(
        schedule=str(values["schedule"]),
        output=project.resolve(str(values["output"])),
        host=str(values["host"]),
        port=port if isinstance(port, int) else int(str(DEFAULTS["Docs_site"]["port"])),
        base_url=optional("base_url"),
        trusted_proxies=words("trusted_proxies"),
        allowed_ips=words("allowed_ips"),
        ngrok_authtoken_variable=optional("ngrok_authtoken_variable"),
        ngrok_domain=optional("ngrok_domain"),
        ngrok_authtoken=view.secrets.get("ngrok_authtoken_variable") if view else None,
        ngrok_authtoken_problem=(
            _problem_text(view.missing.get("ngrok_authtoken_variable")) if view else None
        ),
    )


def build_auth(view: SectionView | None) -> Auth:
    # Absent, the section is its defaults, and stays out of the fingerprint like Redaction.
    values = {**DEFAULTS["Auth"], **(view.values if view else {})}
    if view is not None and "oidc_issuer" in values:
        view.require("oidc_client_id", "the client id registered with the OpenID provider")
        view.require(
            "oidc_client_secret_variable",
            "the variable holding the client secret, never the secret",
        )

    def optional(key: str) -> str | None:
        found = values.get(key)
        return found if isinstance(found, str) else None

    groups = values["oidc_group_roles"]
    return Auth(
        oidc_issuer=optional("oidc_issuer"),
        oidc_client_id=optional("oidc_client_id"),
        oidc_default_role=str(values["oidc_default_role"]),
        oidc_group_roles=dict(groups) if isinstance(groups, dict) else {},
        oidc_groups_claim=str(values["oidc_groups_claim"]),
        oidc_scopes=str(values["oidc_scopes"]),
        oidc_redirect_url=optional("oidc_redirect_url"),
        oidc_client_secret=view.secrets.get("oidc_client_secret_variable") if view else None,
    )


def build_retention(view: SectionView | None) -> Retention:
    # Absent, the section is its defaults, and stays out of the fingerprint like Redaction.
    values = {**DEFAULTS["Retention"], **(view.values if view else {})}

    def days(key: str) -> int:
        return int(str(values[key]))

    interventions = values["interventions_days"]
    return Retention(
        run_history_days=days("run_history_days"),
        attempt_log_days=days("attempt_log_days"),
        consumption_days=days("consumption_days"),
        interventions_days=None if interventions == NEVER else int(str(interventions)),
        daily_at=time.fromisoformat(str(values["daily_at"])),
        batch_rows=days("batch_rows"),
    )


def build_store(view: SectionView | None) -> StoreSettings | None:
    """A store section's settings (Logs, Artifacts); None when it names no store."""
    url = view.text("store") if view else None
    if view is None or url is None:
        return None
    return StoreSettings(url, endpoint_url=view.text("endpoint_url"), region=view.text("region"))


def build_logs(view: SectionView | None) -> Logs:
    tail_bytes = view.number("tail_bytes") if view else None
    default = DEFAULTS["Logs"]["tail_bytes"]
    return Logs(build_store(view), tail_bytes if tail_bytes is not None else int(str(default)))


def build_cloning(view: SectionView | None) -> Cloning | None:
    """None without a Cloning section: cloning is off until a project asks for it."""
    if view is None:
        return None
    values = view.values
    return Cloning(
        schema=str(values["schema"]),
        every_minutes=int(str(values["every_minutes"])),
        lock_wait_seconds=int(str(values["lock_wait_seconds"])),
        overlap_seconds=int(str(values["overlap_seconds"])),
    )
