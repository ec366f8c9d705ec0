-- name: ledger_exists --
-- Whether the migration ledger exists, i.e. whether this Engine DB was ever initialised.
SELECT to_regclass('schema_migrations') IS NOT NULL AS present;

-- name: lock_migrations --
-- Serialise migrators: held until this transaction ends.
SELECT pg_advisory_xact_lock(hashtext('etl_craft.migrate'));
