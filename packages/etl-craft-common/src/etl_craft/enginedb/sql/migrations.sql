-- name: applied_migrations --
-- The ledger of one stream and scope, oldest first.
SELECT VERSION AS version, NAME AS name, CHECKSUM AS checksum,
       APPLIED_AT AS applied_at, APPLIED_BY AS applied_by
  FROM SCHEMA_MIGRATIONS
 WHERE STREAM = :stream AND SCOPE = :scope
 ORDER BY VERSION;

-- name: record_migration --
-- Record one applied migration in the ledger.
INSERT INTO SCHEMA_MIGRATIONS (STREAM, SCOPE, VERSION, NAME, CHECKSUM, APPLIED_AT, APPLIED_BY)
VALUES (:stream, :scope, :version, :name, :checksum, etl_craft_now(), :applied_by);

-- name: ensure_project --
-- Create the active project with this code when there is none.
INSERT INTO CFG_PROJECTS (PROJECT_CODE, PROJECT_NAME, TIMEZONE)
SELECT CAST(:project_code AS VARCHAR(128)), CAST(:project_code AS VARCHAR(256)), CAST(:timezone AS VARCHAR(64))
 WHERE NOT EXISTS (SELECT 1 FROM CFG_PROJECTS WHERE PROJECT_CODE = CAST(:project_code AS VARCHAR(128)) AND ACTIVE_FLAG = 'Y');

-- name: ensure_pool --
-- Create the pool with this name when there is none.
INSERT INTO CFG_POOLS (POOL_NAME, DESCRIPTION)
SELECT CAST(:pool_name AS VARCHAR(128)), CAST(:description AS VARCHAR(2000))
 WHERE NOT EXISTS (SELECT 1 FROM CFG_POOLS WHERE POOL_NAME = CAST(:pool_name AS VARCHAR(128)));
