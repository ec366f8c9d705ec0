"""Which values an attempt must never record: its resolved secrets and its secret parameters.

A parameter is secret when its name matches one of Redaction.sensitive_patterns and no handler
declares it: a declared parameter (MERGE_KEY, MERGE_COMPARE_COLUMNS) means what its declaration
says, and its value is what the handler runs with, so it is never a secret. The keys of
INPUT_PARAMS are judged by the patterns alone. Masking applies to what is recorded or shown;
the handler always runs with the values as written.
"""

from __future__ import annotations

from collections.abc import Iterable

from etl_craft.config.connector import Connector
from etl_craft.core.enums import Handler
from etl_craft.core.redaction import SENSITIVE_PATTERNS, Redactor, SensitiveNames, parameter_secrets
from etl_craft.enginedb.attempts import AttemptInvocation
from etl_craft.handlers.parameters import declarations_for

DECLARED = frozenset(
    declaration.name.upper() for handler in Handler for declaration in declarations_for(handler)
)


def sensitive_names(connector: Connector | None) -> SensitiveNames:
    patterns = connector.redaction.sensitive_patterns if connector else SENSITIVE_PATTERNS
    return SensitiveNames(patterns, DECLARED)


def attempt_redactor(
    connector: Connector | None, invocation: AttemptInvocation, also: Iterable[str] = ()
) -> Redactor:
    """Masks every secret the configuration resolved, every secret parameter value of the
    attempt's pipeline and task, and ``also``."""
    parameters = [*invocation.pipeline_parameters.items(), *invocation.parameters.items()]
    found = parameter_secrets(parameters, sensitive_names(connector)) | set(also)
    return Redactor((connector.secrets if connector else frozenset()) | found)
