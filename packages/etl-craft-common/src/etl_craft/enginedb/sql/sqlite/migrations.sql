-- name: ledger_exists --
-- Whether the migration ledger exists, i.e. whether this Engine DB was ever initialised.
SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'SCHEMA_MIGRATIONS') AS present;

-- name: lock_migrations --
-- Serialise migrators: BEGIN IMMEDIATE already holds SQLite's single write lock.
SELECT 1;

-- name: lock_pipeline_runs --
-- Serialise callers that find or create a pipeline's run: BEGIN IMMEDIATE already holds the write lock.
SELECT 1 WHERE :pipeline_id IS NOT NULL;
