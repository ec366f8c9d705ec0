"""The configuration reference: craft-connector.yml keys and the ETL_CRAFT_* variables.

Which keys exist, their defaults and the required sections come from etl_craft.config.rules;
which variables exist and their defaults from etl_craft.config.environment, the environment's
reader. What each one means is written here, and the generator refuses to run while a key or
variable has no description, or a description names one that no longer exists.
"""

from __future__ import annotations

from docs.generator.markdown import code, header, page, table
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from etl_craft.config.environment import EnvironmentSettings
from etl_craft.config.rules import DEFAULTS, KEYS, REQUIRED_SECTIONS
from etl_craft.config.settings import ENV_PREFIX
from etl_craft.core.actor import ACTOR_VARIABLE

SOURCE = "etl_craft.config.rules and etl_craft.config.environment"
INTRO = (
    "`craft-connector.yml` sits in the project folder (`etl-craft/` of a project made by "
    "`etl-craft new`); commands find it from the current folder upwards, or take `--config "
    "PATH`. Paths in it are relative to its folder and may not climb out of it. Secrets are "
    "never written in the file: a URL names them as `${VARIABLE}` and `password_variable` "
    "names the variable, whose value comes from the environment, else from the project's "
    "`.env` file, or from the provider the `Secrets` section names. Every problem of the "
    "file is reported at once, with its line."
)

SECTIONS: dict[str, str] = {
    "Engine": "The Engine DB: the metadata and the state of every run. One of `url` and `path`.",
    "Warehouse": "The warehouse the SQL tasks, business rules and scripts work in.",
    "Email": "The SMTP relay EMAIL_ALERT tasks send through. Needed only by alert tasks.",
    "Orchestration": "How runs are driven. Every key has a default, so the section is optional.",
    "Redaction": "Which task parameters hold secrets. Optional. A parameter whose name matches "
    "a pattern, and every key of INPUT_PARAMS that matches one, has its value replaced by "
    "`***` before it is written to an attempt log, TASK_LOG, ERROR_MESSAGE or any other "
    "record, and wherever it is shown. A parameter a handler declares (such as MERGE_KEY or "
    "MERGE_COMPARE_COLUMNS, see the task parameters reference) is never a secret, whatever "
    "its name; tasks always run with the values as written. The values of the secrets "
    "etl-craft resolves (URL passwords, including `password`, `pwd` and similar query keys, "
    "and `password_variable`) are masked the same way.",
    "Docs_site": "The data catalog site: where `etl-craft catalog run` builds it, when it "
    "rebuilds it, and how `etl-craft catalog serve` serves it. Optional; every key but the "
    "public URL and ngrok's has a default. See the catalog hosting guide.",
    "Retention": "How long run history stays in the Engine DB. Optional; every key has a "
    "default. `etl-craft purge` deletes what is past it, and `etl-craft server` purges once a "
    "day. A run that a retained run's consumption or gate decision references stays, and so "
    "does a run whose interventions are kept. See the retention guide.",
    "Cloning": "The AUD_ tables mirrored into a schema of the warehouse, so dashboards can "
    "read run history there. Optional: cloning is off without this section; with it, "
    "`etl-craft server` clones every `every_minutes` and `etl-craft clone` clones by hand. "
    "Secrets are masked as the API masks them. See the cloning guide.",
    "Alerts": "Channels the overseer tells of a failed run, a missed SLA or a LOST attempt, "
    "with no alert task in the pipeline. Optional. See the alerts guide.",
    "Secrets": "Where the variables the other sections name get their values. Optional: by "
    "default the environment, then the project's `.env`. See the security guide.",
    "Logs": "Where attempt logs go once their attempts end, and how much of each the Engine DB "
    "keeps. Optional: without a store, each log stays on the host of the process that ran it. "
    "See the stores guide.",
    "Artifacts": "Where project bundles are published (`etl-craft bundle publish`) and where "
    "workers fetch them from. Optional: without it, task processes read the project folder. "
    "See the stores guide.",
    "Auth": "Single sign-on to the web UI through an OpenID Connect provider (authorization code "
    "flow with PKCE). Optional: without `oidc_issuer`, people sign in with a user name and "
    "password or an API token. A user is created at their first sign-in. See the security "
    "guide.",
}

KEY_DESCRIPTIONS: dict[str, dict[str, str]] = {
    "Auth": {
        "oidc_issuer": "The OpenID provider's issuer URL, such as "
        "`https://login.example.com/realms/data`; its "
        "`/.well-known/openid-configuration` names the endpoints.",
        "oidc_client_id": "The client id the provider registered for the web UI.",
        "oidc_client_secret_variable": "The variable holding the client secret.",
        "oidc_default_role": "The role of a user none of whose groups `oidc_group_roles` names "
        "(default `viewer`).",
        "oidc_group_roles": "Values of the groups claim and the role each gives, such as "
        "`{etl-admins: admin, data-team: developer}`; a user in several gets the highest, at "
        "every sign-in.",
        "oidc_groups_claim": "The ID token claim listing the user's groups (default `groups`).",
        "oidc_scopes": "The scopes asked for, space-separated (default `openid profile email`); "
        "add the one that makes the provider put the groups claim in the ID token, such as "
        "`groups`.",
        "oidc_redirect_url": "The address the provider sends the browser back to, as registered "
        "with it: the UI's external URL followed by `/sign-in/oidc/callback`. Default: built "
        "from the request's own address.",
    },
    "Engine": {
        "url": "A PostgreSQL Engine DB as an SQLAlchemy URL, such as "
        "`postgresql+psycopg://etl:${ENGINE_PASSWORD}@db.example.com/etl`.",
        "path": "A SQLite Engine DB file in the project, such as `data/engine.db`.",
        "writer_role": "On PostgreSQL, the role whose members may write etl-craft's tables "
        "besides their owner; every other login is refused whatever it claims. Installed into "
        "the guards by `init-db` and `migrate`; `setup --print-grants` prints its GRANTs.",
    },
    "Warehouse": {
        "type": "`postgresql`, `duckdb`, `iceberg`, `snowflake` or `spark`.",
        "url": "With `type: postgresql`: its SQLAlchemy URL, the password as `${VARIABLE}`. "
        "With `type: iceberg`: the PostgreSQL database of the Iceberg catalog. "
        "With `type: snowflake`: another endpoint than the account's own, such as a private "
        "link's `https://host`.",
        "path": "With `type: duckdb`: a DuckDB file in the project, such as "
        "`data/warehouse.duckdb`, or `:memory:`. With `type: iceberg`: a SQLite file for the "
        "Iceberg catalog, such as `data/lakehouse.db`.",
        "location": "With `type: iceberg`: the folder for the table files; relative to the "
        "catalog file's folder with `path`, absolute with `url`.",
        "catalog_name": "With `type: iceberg`: the catalog's name in its database (default "
        "`etl_craft`).",
        "ledger_schema": "The warehouse schema holding etl-craft's attempt ledger, its fence "
        "table and the `rejected__*` tables of REJECT rules: a code.",
        "max_queries": "Most attempts of warehouse tasks (SQL, BUSINESS_RULES, EMAIL_ALERT) "
        "queued or running at once in the project; unset means no limit.",
        "account": "With `type: snowflake`: the account identifier, such as `myorg-myaccount`.",
        "user": "With `type: snowflake`: the service user's name.",
        "role": "With `type: snowflake`: the role the session uses; the user's default if unset.",
        "warehouse": "With `type: snowflake`: the virtual warehouse that runs the statements; "
        "the user's default if unset.",
        "database": "With `type: snowflake`: the database the targets are in.",
        "schema": "With `type: snowflake`: the session's schema, where scratch tables go; "
        "`PUBLIC` if unset.",
        "password_variable": "With `type: snowflake`: the variable holding the user's password.",
        "key_file": "With `type: snowflake`: the private key file of key-pair authentication.",
        "private_key_passphrase_variable": "With `type: snowflake`: the variable holding the "
        "key file's passphrase, when it has one.",
        "remote": "With `type: spark`: the Spark Connect server, such as "
        "`sc://spark-connect:15002`. See the Spark guide.",
        "token_variable": "With `type: spark`, optional: the environment variable holding the "
        "Spark Connect bearer token.",
        "scratch_schema": "With `type: spark`, optional: the schema of stages and candidate "
        "tables (default `etl_craft_scratch`).",
    },
    "Email": {
        "host": "The SMTP relay's host name, such as `smtp.example.com`. Required.",
        "port": "Its port; by default 587 with `starttls`, 465 with `ssl`, 25 with `none`.",
        "tls_mode": "`starttls`, `ssl` or `none`.",
        "username": "The login, when the relay wants one.",
        "password_variable": "The name of the variable holding the login's password, such as "
        "`SMTP_PASSWORD`; never the password itself.",
        "from_address": "The sender's address, such as `etl@example.com`. Required.",
        "ca_file": "A CA bundle to verify the relay's certificate with; may be outside the "
        "project.",
        "verify": "`false` turns certificate verification off.",
    },
    "Orchestration": {
        "timezone": "The IANA time zone of the project created by `init-db` and of the run date "
        "of a run created without `--run-date`.",
        "max_parallel_tasks": "Attempts of one run at once when its pipeline sets no "
        "MAX_PARALLEL_TASKS; also the slots per kind of the local provider.",
        "retries": "RETRIES of a task that sets none.",
        "shutdown_grace_seconds": "After SIGTERM, how long `etl-craft server` lets running "
        "task processes finish before it stops them; the same for a foreground `etl-craft run` "
        "after SIGTERM, SIGINT or SIGHUP, where a second signal stops them at once.",
        "lease_seconds": "Checked, not used yet: leases last ETL_CRAFT_LEASE_SECONDS.",
        "gate_wait_minutes": "How long a gate on another pipeline waits for an upstream run "
        "before it decides UNSATISFIED.",
        "project": "The project code (CFG_PROJECTS.PROJECT_CODE) this folder's metadata and "
        "commands belong to.",
        "mode": "local: etl-craft schedules and gates its runs; remote: an external orchestrator "
        "(Airflow, through generate-yml) decides, and run --init-only, --task and "
        "--finalize-only do as told; mark and cancel refuse (guides/airflow.md).",
        "dependency_gates": "How a local run treats its dependencies on other pipelines. "
        "enforce (the default): wait for them, skip what they refuse. warn: judge each once "
        "without waiting; one not met is logged as a warning and counted as met. off: judge "
        "none; each counts as met. Under warn and off a FAILURE dependency is never counted as "
        "met (it triggers on a failure), each bypass is an AUD_GATE_DECISIONS row BYPASSED naming "
        "the setting, and doctor warns. For development profiles, not for shared data.",
        "db_pool_size": "The Engine DB connections each process of the project pools at most "
        "(1 to 1000). Unset: 10 for the server, the API and the web UI, and 2 + 1 per 8 slots "
        "for a worker; task processes hold one at most, whatever it says "
        "(guides/deploying.md#the-engine-db-connection-budget).",
    },
    "Redaction": {
        "sensitive_patterns": "Glob patterns (`*` and `?` wildcards, `[...]` sets) matched "
        "without case against task and pipeline parameter names and INPUT_PARAMS keys, such "
        'as `["*TOKEN*", "*SECRET*", "*PASSWORD*", "*KEY*", "*_PW"]`. Setting it replaces the '
        "defaults, so repeat those you keep.",
    },
    "Docs_site": {
        "schedule": "When the catalog builder rebuilds the site: a cron expression or a macro "
        "(`@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`), read in "
        "Orchestration.timezone.",
        "output": "The site's folder in the project. It is a link to the release being "
        "served; releases are kept beside it in a hidden folder.",
        "host": "The address `catalog serve` listens on; loopback by default. Give `0.0.0.0` "
        "only behind a reverse proxy or in a container.",
        "port": "The port it listens on.",
        "base_url": "The catalog's external URL, such as `https://data.example.com/catalog/`, "
        "when a reverse proxy or ingress of the organization routes it to the serving port; "
        "its path is the prefix the site is served beneath. Recorded in the Engine DB: a "
        "later publication at another URL is refused unless `--replace-url` is given.",
        "trusted_proxies": "Addresses or CIDR ranges of the reverse proxies whose "
        "`X-Forwarded-For` names the visitor; from any other peer the header is ignored.",
        "allowed_ips": "CIDR ranges of the visitors allowed in (403 for others), checked on "
        "the visitor address; empty lets everyone in.",
        "ngrok_authtoken_variable": "With `catalog serve --ngrok`: the name of the variable "
        "holding the ngrok authtoken, such as `NGROK_AUTHTOKEN`; never the token itself.",
        "ngrok_domain": "With `--ngrok`: the reserved or custom ngrok domain to publish at; "
        "without it, the account's own dev domain.",
    },
    "Retention": {
        "run_history_days": "Days a run is kept after it ended, with its task runs, attempts, "
        "gate decisions and waits (1 to 36500; default 400).",
        "attempt_log_days": "Days an attempt's log file is kept on the host that wrote it (a "
        "log in the Logs store goes with its attempt's row); "
        "the attempt's row, with its log tail, stays with its run (1 to 36500; default 90).",
        "consumption_days": "Days a record of which upstream run a run consumed is kept "
        "(1 to 36500; default 400). While it is kept, the upstream run is kept too.",
        "interventions_days": "Days an intervention (mark, cancel, rerun...) is kept: a "
        "number from 1 to 36500, or `never` (the default) to keep them, and their runs, for "
        "ever.",
        "daily_at": "When the overseer purges each day, as HH:MM on a 24-hour clock, read in "
        "Orchestration.timezone (default `03:00`).",
        "batch_rows": "Rows deleted per transaction, so that a purge holds its locks briefly "
        "(1 to 100000; default 10000).",
    },
    "Cloning": {
        "schema": "The warehouse schema of the mirror, created with its tables when missing "
        "and never dropped (default `aud_mirror`). The Engine DB's own schema is refused.",
        "every_minutes": "How often the leading overseer clones (1 to 10080; default 15).",
        "lock_wait_seconds": "How long a clone waits while another holds the clone lock "
        "before it skips its turn (0 to 604800; default 60).",
        "overlap_seconds": "Rows written this long before the last clone's watermark are "
        "read again, so a transaction that committed late is copied too "
        "(0 to 604800; default 600).",
    },
    "Alerts": {
        "channels": "A list of channels, each with `name`, `kind` (`webhook`: a signed JSON "
        "document; `slack`: Slack's incoming-webhook body; `email`: a message through the Email "
        "section's relay), `url_variable` (webhook, slack: the variable holding its URL), "
        "`secret_variable` (webhook: the variable holding the HMAC-SHA256 key), `to` (email: "
        "the recipients), and optionally `pipelines` (codes; default every pipeline) and "
        "`events` (`RUN_FAILED`, `SLA_MISSED`, `ATTEMPT_LOST`, `GATE_WAITING`, `NO_WORKER`; "
        "default all).",
        "lookback_minutes": "Events older than this are never raised, so a new channel does "
        "not replay history.",
        "retry_seconds": "The wait after a failed delivery, doubled after each further one.",
        "gate_wait_minutes": "A dependency gate waiting longer than this for its upstream "
        "raises `GATE_WAITING`.",
        "links_base_url": "The web UI's external address; alerts link to the run and attempt.",
    },
    "Secrets": {
        "provider": "`env` (the environment, then `.env`), `aws-secrets-manager` (the `aws` "
        "extra) or `vault` (HashiCorp Vault or OpenBao KV version 2, the `vault` extra).",
        "cache_seconds": "How long a value read from AWS or Vault is reused before the "
        "provider is asked again: a value rotated there is used at most this late.",
        "url": "`vault`: the server's address. `aws-secrets-manager`: an endpoint to use in "
        "place of AWS's own (optional).",
        "region": "`aws-secrets-manager`: the region of the secrets, such as `eu-west-1`. "
        "Credentials come from boto3's usual chain (environment, profile, IAM role).",
        "prefix": "`aws-secrets-manager`: put before each variable name to make the secret's "
        "name, so `etl-craft/prod/` reads `etl-craft/prod/WAREHOUSE_PW`.",
        "mount": "`vault`: the mount point of the KV version 2 engine.",
        "path": "`vault`: the secret whose keys are the variable names, such as `etl-craft/prod`.",
        "token_variable": "`vault`: the variable, in the environment or `.env`, that holds "
        "the Vault token.",
    },
    "Logs": {
        "store": "`file:///absolute/folder` (a folder, local or shared) or `s3://bucket/prefix` "
        "(AWS S3 or any S3-compatible service).",
        "endpoint_url": "`s3://`: the address of an S3-compatible service, such as "
        "`http://minio:9000`; without it, boto3's own (`AWS_ENDPOINT_URL_S3`, else AWS).",
        "region": "`s3://`: the bucket's region. Credentials come from boto3's usual chain "
        "(environment, profile, IAM role); the `aws` extra installs boto3.",
        "tail_bytes": "How many bytes of the end of each attempt's log `TASK_LOG` keeps "
        "(256 to 1048576; default 8192).",
    },
    "Artifacts": {
        "store": "`file:///absolute/folder` (a folder, local or shared) or `s3://bucket/prefix` "
        "(AWS S3 or any S3-compatible service).",
        "endpoint_url": "`s3://`: the address of an S3-compatible service, such as "
        "`http://minio:9000`; without it, boto3's own (`AWS_ENDPOINT_URL_S3`, else AWS).",
        "region": "`s3://`: the bucket's region. Credentials come from boto3's usual chain "
        "(environment, profile, IAM role); the `aws` extra installs boto3.",
    },
}

VARIABLE_DESCRIPTIONS: dict[str, str] = {
    "engine_url": "An SQLAlchemy URL that overrides the configuration's Engine DB for every "
    "command and service.",
    "profile": "The profile to apply when `--profile` is not given.",
    "poll_seconds": "How often loops read the tables when no notification woke them.",
    "lease_seconds": "How long an owner's lease on a run or attempt lasts without renewal.",
    "heartbeat_seconds": "How often owners renew their leases; must be below the lease.",
    "engine_connect_timeout_seconds": "How long a connection attempt to a PostgreSQL Engine DB "
    "may take before it fails (at least 2): no process hangs on an unreachable Engine DB. "
    "An owner (run, server, worker) takes at most a fifth of its lease, never under 2.",
    "engine_statement_timeout_seconds": "How long one PostgreSQL Engine DB statement may run "
    "or wait on a lock before it is cancelled; `0` sets no limit.",
    "engine_give_up_seconds": "How long a server, standby or worker that can't reach the "
    "Engine DB keeps trying (with backoff, a warning every 10 tries) before it exits; `0`, "
    "the default, never gives up.",
    "log_level": "The log level of task processes, and the lowest level a worker logs at.",
    "log_format": "Checked, not used yet: commands take `--log-format`.",
    "task_start": "`fork`: task processes are forked by a fork server that imported the "
    "handlers once; `spawn`: a fresh interpreter per attempt.",
    "logs_store": "A Logs store URL that replaces the configuration's `Logs.store`: a worker "
    "with no project folder learns its store here.",
    "artifacts_store": "An Artifacts store URL that replaces the configuration's "
    "`Artifacts.store`.",
    "store_endpoint_url": "With `ETL_CRAFT_LOGS_STORE` or `ETL_CRAFT_ARTIFACTS_STORE`: the "
    "address of their S3-compatible service.",
    "store_region": "With `ETL_CRAFT_LOGS_STORE` or `ETL_CRAFT_ARTIFACTS_STORE`: their "
    "bucket's region.",
    "bundle_cache": "Where an owner (worker, server, `etl-craft run`) materialises the bundles "
    "its runs pinned, one folder per bundle id; by default "
    "`~/.cache/etl-craft/bundles/<Engine DB>`.",
    "worker_token": "The credential of the workers' log endpoint: a worker with it set serves "
    "its running attempts' logs (`--log-port`) to readers that present it; set it to the same "
    "value where `etl-craft logs`, the API and the UI run. Unset, workers serve no logs.",
}
ACTOR_DESCRIPTION = (
    "Who a CLI command acts as: recorded on every row it writes. Unset, it is `user@host`."
)


def render() -> str:
    _require_descriptions()
    lines = header("Configuration", SOURCE, INTRO)
    lines += ["## craft-connector.yml", ""]
    lines += [
        "Sections " + " and ".join(f"`{name}`" for name in REQUIRED_SECTIONS) + " are required.",
        "",
    ]
    for section, keys in KEYS.items():
        lines += [f"### {section}", "", SECTIONS[section], ""]
        defaults = DEFAULTS[section]
        rows = (
            (code(key), _value(defaults.get(key)), KEY_DESCRIPTIONS[section][key]) for key in keys
        )
        lines += table(("key", "default", "description"), rows)
    lines += _profiles()
    lines += ["## Environment variables", ""]
    variables = [
        (code(f"{ENV_PREFIX}{name.upper()}"), _default(field), VARIABLE_DESCRIPTIONS[name])
        for name, field in EnvironmentSettings.model_fields.items()
    ]
    variables.append((code(ACTOR_VARIABLE), "", ACTOR_DESCRIPTION))
    lines += table(("variable", "default", "description"), variables)
    return page(lines)


def _profiles() -> list[str]:
    return [
        "### profiles",
        "",
        "`profiles:` holds named sets of the same sections; the selected profile "
        "(`--profile NAME`, else `ETL_CRAFT_PROFILE`) is laid over the base values key by key, "
        "and `key: null` in a profile removes a base value (a profile switching the Engine DB "
        "from `path` to `url` clears `path`):",
        "",
        "```yaml",
        "Engine:",
        "  path: data/engine.db",
        "Warehouse:",
        "  type: duckdb",
        "  path: data/warehouse.duckdb",
        "profiles:",
        "  postgres:",
        "    Engine:",
        "      path: null",
        "      url: postgresql+psycopg://etl:${ENGINE_PASSWORD}@db.example.com/etl",
        "    Warehouse:",
        "      type: postgresql",
        "      path: null",
        "      url: postgresql+psycopg://etl:${WAREHOUSE_PASSWORD}@dwh.example.com/dwh",
        "```",
        "",
    ]


def _value(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return code(str(value).lower())
    return code(str(value))


def _default(field: FieldInfo) -> str:
    return "" if field.default in (None, PydanticUndefined) else code(str(field.default))


def _require_descriptions() -> None:
    problems = [
        f"{section}.{key} has no description in KEY_DESCRIPTIONS"
        for section, keys in KEYS.items()
        for key in keys
        if key not in KEY_DESCRIPTIONS.get(section, {})
    ]
    problems += [
        f"KEY_DESCRIPTIONS describes {section}.{key}, which config.rules no longer has"
        for section, keys in KEY_DESCRIPTIONS.items()
        for key in keys
        if key not in KEYS.get(section, {})
    ]
    problems += [
        f"section {name} has no description in SECTIONS" for name in KEYS if name not in SECTIONS
    ]
    fields = EnvironmentSettings.model_fields
    problems += [
        f"{ENV_PREFIX}{name.upper()} has no description in VARIABLE_DESCRIPTIONS"
        for name in fields
        if name not in VARIABLE_DESCRIPTIONS
    ]
    problems += [
        f"VARIABLE_DESCRIPTIONS describes {name}, which the settings no longer have"
        for name in VARIABLE_DESCRIPTIONS
        if name not in fields
    ]
    if problems:
        raise LookupError(
            "the configuration reference is out of step with the code: "
            + "; ".join(problems)
            + "; update docs/generator/configuration.py"
        )
