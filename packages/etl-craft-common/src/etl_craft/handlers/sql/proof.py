"""Whether a merge may compare columns instead of hashing every staged row, and what it leaves
the target's hash record saying (see etl_craft.warehouse.hash_record)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum, auto

from etl_craft.handlers.sql.context import Context
from etl_craft.handlers.sql.phases import Phase
from etl_craft.handlers.sql.stage import Stage
from etl_craft.warehouse import hash_record, statements
from etl_craft.warehouse.dialect import CHANGE_HASH_VERSION, Column
from etl_craft.warehouse.hash_record import Contract, Proof, normal_type

log = logging.getLogger("etl_craft.handlers.sql")

# The target's rows a staged row is compared with, as the merge's own narrowing compares them.
STORED = "etl_t"
# What comparing a staged row with its key's stored row found: NEW (no stored row in scope),
# SAME (the stored row has its values and isn't soft-deleted: the merge leaves it) or DIFFERS.
MATCH = "etl_craft_match"
NEW, SAME, DIFFERS = 0, 1, 2


class Outcome(Enum):
    KEEP = auto()  # the record stays as it is
    FORGET = auto()  # this merge may write rows the record doesn't describe
    PROVE = auto()  # check the target after the writes and record what was found
    PROVEN = auto()  # every row in scope was written by this merge: nothing to check


@dataclass
class HashPlan:
    ctx: Context
    contract: Contract
    key: str
    compare: bool  # stored rows proven: compare columns, hash only the rows that differ
    outcome: Outcome
    soft_deletes: bool = False  # the target has DELETE_FLAG

    def staged_hash(self, change_hash: str) -> str:
        """Each staged row's change hash: a stored row's proven HASH_KEY where the row has its
        key and its compared values, otherwise computed."""
        if not self.compare:
            return change_hash
        return f"CASE WHEN {self._equal()} THEN {STORED}.HASH_KEY ELSE {change_hash} END"

    def match(self) -> str:
        """NEW, SAME or DIFFERS: SAME is what the merge's narrowing would find by HASH_KEY."""
        live = [f"({STORED}.DELETE_FLAG IS NULL OR {STORED}.DELETE_FLAG <> 'Y')"]
        condition = " AND ".join([self._equal(), *(live if self.soft_deletes else [])])
        return (
            f"CASE WHEN {STORED}.HASH_KEY IS NULL THEN {NEW} WHEN {condition} THEN {SAME} "
            f"ELSE {DIFFERS} END"
        )

    def _equal(self) -> str:
        dialect = self.ctx.conn.dialect
        same = [
            dialect.same_hashed(f"etl_src.{column.name}", f"{STORED}.{column.name}", column)
            for column in self.contract.columns
        ]
        return " AND ".join([f"{STORED}.HASH_KEY IS NOT NULL", *same])

    def stored_rows(self) -> str:
        """The join that brings each staged row its key's stored row (one at most: proven)."""
        if not self.compare:
            return ""
        keys = self.contract.keys
        names = [*keys, *(column.name for column in self.contract.columns), "HASH_KEY"]
        if self.soft_deletes:
            names.append("DELETE_FLAG")
        listed = ", ".join(dict.fromkeys(names))
        where = " AND ".join(_scope(self.contract)) or "1 = 1"
        on = " AND ".join(f"etl_src.{key} = {STORED}.{key}" for key in keys)
        return (
            f"\nLEFT JOIN (SELECT {listed} FROM {self.ctx.target} t WHERE {where}) {STORED} ON {on}"
        )

    def settle(self, deduped: str) -> None:
        """After the merge's writes, in its transaction: what the record says from now on.
        ``deduped`` holds the merge's staged rows, one per key, with their change hashes."""
        ctx, schema = self.ctx, self.ctx.spec.ledger_schema
        if self.outcome is Outcome.KEEP:
            return
        with ctx.phases.of(Phase.BOOKKEEPING):
            if self.outcome is Outcome.FORGET:
                hash_record.forget(ctx.conn, schema, self.key)
                return
        proof = Proof.PROVEN
        if self.outcome is Outcome.PROVE:
            with ctx.phases.of(Phase.HASH):
                proof = self._check(deduped)
        with ctx.phases.of(Phase.BOOKKEEPING):
            hash_record.write(
                ctx.conn, schema, self.key, self.contract, proof, ctx.spec.attempt_id, ctx.now
            )

    def _check(self, deduped: str) -> Proof:
        ctx, dialect = self.ctx, self.ctx.conn.dialect
        expression = dialect.change_hash("t", self.contract.columns)
        same = " AND ".join(
            dialect.same_hashed(f"t.{column.name}", f"d.{column.name}", column)
            for column in self.contract.columns
        )
        scope = _scope(self.contract)
        staged = (deduped, same or "1 = 1")
        statement = hash_record.check(ctx.target, self.contract, expression, scope, staged)
        row = ctx.conn.fetch_all(f"check the stored hashes ({ctx.target})", statement.sql)[0]
        repeated, stale = int(row[0]), int(row[1])
        if not repeated and not stale:
            return Proof.PROVEN
        log.info(
            "%s has %d row(s) whose HASH_KEY isn't the change hash of their values and %d key(s) "
            "with more than one row, so its merges hash every staged row; `etl-craft rehash "
            "--target %s` recomputes HASH_KEY and lets them compare columns",
            ctx.target,
            stale,
            repeated,
            ctx.spec.target,
        )
        return Proof.STALE


def plan_hashing(
    ctx: Context,
    stage: Stage,
    target: tuple[Column, ...],
    columns: tuple[Column, ...],
    *,
    current_only: bool,
) -> HashPlan:
    """Compare columns only where the record proves the stored hashes for this very contract;
    otherwise hash every staged row, and leave the record true of what this merge writes."""
    contract = Contract(CHANGE_HASH_VERSION, current_only, ctx.spec.merge_key, columns)
    if not ctx.hash_records:
        return HashPlan(ctx, contract, "", compare=False, outcome=Outcome.KEEP)
    key = hash_record.record_key(ctx.conn, ctx.spec.target)
    found = hash_record.read(ctx.conn, ctx.spec.ledger_schema, key)
    if not _stored_as_staged(stage, target, contract):
        # Rows written from other types may store other values than were hashed.
        outcome = Outcome.KEEP if found is None else Outcome.FORGET
        return HashPlan(ctx, contract, key, compare=False, outcome=outcome)
    if found == (contract.text, Proof.PROVEN):
        log.info("%s: HASH_KEY proven for %s; comparing columns", ctx.target, contract.text)
        soft = "delete_flag" in {column.key for column in target}
        return HashPlan(ctx, contract, key, compare=True, outcome=Outcome.KEEP, soft_deletes=soft)
    if found == (contract.text, Proof.STALE):
        return HashPlan(ctx, contract, key, compare=False, outcome=Outcome.KEEP)
    outcome = Outcome.PROVEN if _empty(ctx, contract) else Outcome.PROVE
    return HashPlan(ctx, contract, key, compare=False, outcome=outcome)


def _stored_as_staged(stage: Stage, target: tuple[Column, ...], contract: Contract) -> bool:
    """The target stores the key and each compared column with the stage's own type, so the
    values a merge writes are the values it hashed."""
    existing = {column.key: column for column in target}
    for name in (*contract.keys, *(column.name for column in contract.columns)):
        stored = existing.get(name.lower())
        if stored is None or normal_type(stored.type) != normal_type(stage.column(name).type):
            return False
    return True


def _scope(contract: Contract) -> list[str]:
    return [statements.current_version()] if contract.current_only else []


def _empty(ctx: Context, contract: Contract) -> bool:
    where = " AND ".join(_scope(contract)) or "1 = 1"
    sql = f"SELECT COUNT(*) FROM (SELECT 1 FROM {ctx.target} t WHERE {where} LIMIT 1) e"
    return not ctx.conn.fetch_value(f"look for stored rows ({ctx.target})", sql)
