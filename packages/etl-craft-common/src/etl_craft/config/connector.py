"""craft-connector.yml: read, check every key, apply the selected profile, resolve secrets."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from etl_craft.config import providers
from etl_craft.config.alerts import Alerts, build_alerts
from etl_craft.config.document import LocatedMapping, Problems, read_document
from etl_craft.config.project import Project
from etl_craft.config.providers import EnvFileProvider, EnvironmentProvider
from etl_craft.config.rules import DEFAULTS, KEYS, REQUIRED_SECTIONS, Parser, suggestion
from etl_craft.config.secrets import SecretResolver, read_env_file
from etl_craft.config.sections import (
    Auth,
    Cloning,
    DocsSite,
    Email,
    Logs,
    Orchestration,
    Redaction,
    Retention,
    SectionView,
    Warehouse,
    build_auth,
    build_cloning,
    build_docs_site,
    build_email,
    build_engine_url,
    build_logs,
    build_orchestration,
    build_redaction,
    build_retention,
    build_secrets,
    build_store,
    build_warehouse,
    secrets_resolver,
)
from etl_craft.core.errors import ConfigurationError
from etl_craft.stores import StoreSettings

PROFILE_VARIABLE = "ETL_CRAFT_PROFILE"
# Set by an owner for a task process it starts from a bundle: the project folder whose .env
# and project-relative Engine and Warehouse paths apply (the bundle holds only the files).
DATA_ROOT_VARIABLE = "ETL_CRAFT_DATA_ROOT"
PROFILES_KEY = "profiles"
SECTIONS = tuple(KEYS)


@dataclass(frozen=True)
class Connector:
    path: Path
    profile: str | None
    # Resolved URLs and secrets are kept out of repr so that logging a Connector leaks nothing.
    engine_url: str = field(repr=False)
    # The PostgreSQL role whose members may write etl-craft's tables, besides their owner.
    writer_role: str
    warehouse: Warehouse
    email: Email | None
    orchestration: Orchestration
    redaction: Redaction
    docs_site: DocsSite
    retention: Retention
    alerts: Alerts
    logs: Logs
    artifacts: StoreSettings | None  # where project bundles are published and fetched from
    cloning: Cloning | None  # None: no Cloning section, cloning is off
    auth: Auth
    secrets: frozenset[str] = field(repr=False)
    # When a secret from a remote provider may have been rotated (on providers.clock): a
    # process that keeps this Connector reads the configuration again from then on.
    secrets_expire_at: float | None = field(repr=False)
    normalised: str = field(repr=False)
    # Secrets whose variable is unset, each as "file:line: what is missing and where to set it".
    # The commands that use one fail on it; the others only warn.
    missing_secrets: tuple[str, ...] = ()

    @property
    def project(self) -> Project:
        return Project(self.path.parent)

    def require_secrets(self, needed_by: str) -> None:
        """Refuse ``needed_by``, which may come to use any of them, while a secret is unset."""
        if self.missing_secrets:
            raise ConfigurationError(
                f"{needed_by} needs every secret its configuration names: "
                + "; ".join(self.missing_secrets)
            )

    def secrets_expired(self) -> bool:
        return self.secrets_expire_at is not None and providers.clock() >= self.secrets_expire_at

    def fingerprint(self) -> str:
        """SHA-256 of the effective settings with secrets as variable names (CONFIG_SHA256)."""
        return hashlib.sha256(self.normalised.encode("utf-8")).hexdigest()


@dataclass
class CheckedSection:
    """One section as written in one place (the base file or one profile), keys checked."""

    line: int
    values: dict[str, object] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    # `key: null` in a profile removes the base value, e.g. path: null to switch to url.
    cleared: set[str] = field(default_factory=set)
    invalid: set[str] = field(default_factory=set)


def load_connector(
    path: Path,
    *,
    profile: str | None,
    environ: Mapping[str, str] | None = None,
    data_root: Path | None = None,
) -> Connector:
    """Load ``path`` with ``profile`` (else ETL_CRAFT_PROFILE); one error lists every problem.
    ``data_root``: the folder whose .env and relative data paths apply (else ``path``'s)."""
    env = os.environ if environ is None else environ
    path = path.resolve()
    problems = Problems()
    document, duplicates = read_document(path)
    problems.extend(duplicates)
    checker = _Checker(path, problems)
    base = checker.sections(document, "")
    profiles = checker.profiles(document)
    selected = checker.select_profile(profile, env, profiles, document.line_of(PROFILES_KEY))
    overrides = profiles.get(selected, {}) if selected else {}
    views = {
        name: _merge(name, base.get(name), overrides.get(name), path, problems)
        for name in SECTIONS
        # Orchestration has a default for every key, so an absent section is the defaults.
        if name in base or name in overrides or name == "Orchestration"
    }
    for name in REQUIRED_SECTIONS:
        if name not in views:
            problems.add(
                path, document.line, f"section {name} is missing; expected {name}: {_SHAPES[name]}"
            )
    project = Project(data_root or path.parent)
    file_values, env_file_problems = read_env_file(project.env_file)
    problems.extend(env_file_problems)
    local = SecretResolver(
        [EnvironmentProvider(env), EnvFileProvider(project.env_file, file_values)]
    )
    return _build(path, selected, views, local, problems, project)


_SHAPES = {
    "Engine": "with url: (an SQLAlchemy URL) or path: (a SQLite file in the project)",
    "Warehouse": "with type: (postgresql or duckdb) and the keys that type takes",
}


def _build(
    path: Path,
    profile: str | None,
    views: dict[str, SectionView],
    local: SecretResolver,
    problems: Problems,
    project: Project,
) -> Connector:
    provider_view = views.get("Secrets")
    provider = build_secrets(provider_view)
    resolver = secrets_resolver(provider, provider_view, local) if provider else None
    if resolver is None:
        problems.raise_if_any(str(path))
        raise AssertionError(f"{path} failed to load without reporting why")
    for name, view in views.items():
        if name != "Secrets":
            view.resolve_secrets(resolver)
    engine = views.get("Engine")
    engine_url = build_engine_url(engine, resolver, project) if engine else None
    stored = views.get("Warehouse")
    warehouse = build_warehouse(stored, resolver, project) if stored else None
    email = build_email(views["Email"], project) if "Email" in views else None
    alerts, unresolved_channels = build_alerts(
        views["Alerts"].values if "Alerts" in views else {},
        resolver,
        views["Orchestration"].filled_text("project"),
        email,
    )
    orchestration = build_orchestration(views["Orchestration"])
    redaction = build_redaction(views.get("Redaction"))
    docs_site = build_docs_site(views.get("Docs_site"), project)
    retention = build_retention(views.get("Retention"))
    cloning = build_cloning(views.get("Cloning"))
    auth = build_auth(views.get("Auth"))
    problems.raise_if_any(str(path))
    if engine_url is None or warehouse is None or ("Email" in views and email is None):
        raise AssertionError(f"{path} failed to load without reporting why")
    return Connector(
        path=path,
        profile=profile,
        engine_url=engine_url,
        writer_role=views["Engine"].filled_text("writer_role"),
        warehouse=warehouse,
        email=email,
        orchestration=orchestration,
        redaction=redaction,
        docs_site=docs_site,
        retention=retention,
        alerts=alerts,
        logs=build_logs(views.get("Logs")),
        artifacts=build_store(views.get("Artifacts")),
        cloning=cloning,
        auth=auth,
        secrets=resolver.resolved | local.resolved,
        secrets_expire_at=resolver.expires_at,
        normalised=_normalise(views),
        # The ngrok authtoken is needed by `catalog serve --ngrok` alone, which reads it from
        # docs_site: the server and the workers don't wait for it.
        missing_secrets=(
            *(
                str(problem)
                for name, view in views.items()
                if name != "Docs_site"
                for problem in view.missing.values()
            ),
            *unresolved_channels,
        ),
    )


def _normalise(views: dict[str, SectionView]) -> str:
    # The values as declared (URL templates, variable names, project-relative paths), so the
    # fingerprint is the same on every host and never depends on a secret's value.
    declared = {name: view.values for name, view in views.items()}
    return json.dumps(declared, sort_keys=True, separators=(",", ":"))


def _merge(
    name: str,
    base: CheckedSection | None,
    override: CheckedSection | None,
    path: Path,
    problems: Problems,
) -> SectionView:
    line = (override or base or CheckedSection(1)).line
    view = SectionView(name, line, path, problems, values=dict(DEFAULTS[name]))
    view.lines = dict.fromkeys(view.values, line)
    for written in (base, override):
        if written is None:
            continue
        for key in written.cleared:
            # Clearing a key with a default brings the default back.
            view.values.pop(key, None)
            if key in DEFAULTS[name]:
                view.values[key] = DEFAULTS[name][key]
        # A bad value is reported and never used: an earlier value or the default stands in
        # for it, so the builders can go on and report other problems in the same pass.
        view.invalid = (view.invalid - written.values.keys()) | written.invalid
        view.values.update(written.values)
        view.lines.update(written.lines)
    return view


class _Checker:
    """Checks the shape of the document and of every profile, recording each problem."""

    def __init__(self, path: Path, problems: Problems) -> None:
        self.path = path
        self.problems = problems

    def report(self, line: int, message: str) -> None:
        self.problems.add(self.path, line, message)

    def sections(self, mapping: LocatedMapping, prefix: str) -> dict[str, CheckedSection]:
        allowed = SECTIONS if prefix else (*SECTIONS, PROFILES_KEY)
        checked: dict[str, CheckedSection] = {}
        for name, value in mapping.items():
            line = mapping.line_of(name)
            if name not in allowed:
                self.report(
                    line,
                    f"{prefix}{name} is not a section; expected one of "
                    f"{', '.join(allowed)}{suggestion(name, allowed)}",
                )
            elif name != PROFILES_KEY:
                section = self._mapping(value, f"{prefix}{name}", line)
                if section is not None:
                    checked[name] = self.keys(name, section, f"{prefix}{name}", line)
        return checked

    def keys(self, section: str, mapping: LocatedMapping, label: str, line: int) -> CheckedSection:
        parsers = KEYS[section]
        # Problems of the whole section point at its header line, where a reader looks first.
        checked = CheckedSection(line)
        for key, value in mapping.items():
            checked.lines[key] = mapping.line_of(key)
            if key not in parsers:
                self.report(checked.lines[key], _unknown_key(label, key, parsers))
                checked.invalid.add(key)
            elif value is None:
                checked.cleared.add(key)
            else:
                self._parse(checked, key, value, f"{label}.{key}", parsers[key])
        return checked

    def _parse(
        self, checked: CheckedSection, key: str, value: object, label: str, parser: Parser
    ) -> None:
        try:
            checked.values[key] = parser(value)
        except ValueError as error:
            self.report(checked.lines[key], f"{label} is {value!r}; {error}")
            checked.invalid.add(key)

    def profiles(self, document: LocatedMapping) -> dict[str, dict[str, CheckedSection]]:
        if PROFILES_KEY not in document:
            return {}
        line = document.line_of(PROFILES_KEY)
        mapping = self._mapping(document[PROFILES_KEY], PROFILES_KEY, line)
        profiles: dict[str, dict[str, CheckedSection]] = {}
        for name, value in (mapping or {}).items():
            label = f"{PROFILES_KEY}.{name}"
            sections = self._mapping(value, label, mapping.line_of(name) if mapping else line)
            profiles[name] = self.sections(sections, f"{label}.") if sections is not None else {}
        return profiles

    def select_profile(
        self,
        argument: str | None,
        environ: Mapping[str, str],
        profiles: dict[str, dict[str, CheckedSection]],
        line: int,
    ) -> str | None:
        source = "the profile argument" if argument else PROFILE_VARIABLE
        chosen = argument or environ.get(PROFILE_VARIABLE) or None
        if chosen is None or chosen in profiles:
            return chosen
        defined = ", ".join(profiles) or "none is defined"
        self.report(
            line,
            f"profile {chosen!r} (from {source}) is not under {PROFILES_KEY}:; expected one of "
            f"{defined}{suggestion(chosen, profiles)}; add it there or choose another profile",
        )
        return None

    def _mapping(self, value: object, label: str, line: int) -> LocatedMapping | None:
        if value is None:
            # An empty `Email:` is a section with no keys, not an error of shape.
            return LocatedMapping(line)
        if isinstance(value, LocatedMapping):
            return value
        self.report(
            line,
            f"{label} is a {type(value).__name__} ({value!r}); expected a mapping "
            f"of indented 'key: value' lines under {label.rsplit('.', 1)[-1]}:",
        )
        return None


def _unknown_key(label: str, key: str, known: Mapping[str, object]) -> str:
    return (
        f"{label}.{key} is not a known key; expected one of "
        f"{', '.join(known)}{suggestion(key, known)}"
    )
