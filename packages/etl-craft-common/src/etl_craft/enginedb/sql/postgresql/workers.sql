-- name: worker_live --
-- The workers of a pool that are not gone, oldest first.
SELECT WORKER_ID AS worker_id, POOL AS pool, HOST AS host, PID AS pid, VERSION AS version,
       SCHEMA_VERSION AS schema_version, INGESTION_SLOTS AS ingestion_slots,
       WAREHOUSE_SLOTS AS warehouse_slots, STARTED_AT AS started_at, HEARTBEAT_AT AS heartbeat_at,
       STATUS AS status
  FROM AUD_WORKERS
 WHERE POOL = :pool AND STATUS <> 'GONE'
 ORDER BY STARTED_AT, WORKER_ID;

-- name: worker_project_pool --
-- The pool a project's tasks use when they name none.
SELECT DEFAULT_POOL AS default_pool
  FROM CFG_PROJECTS
 WHERE PROJECT_CODE = CAST(:project_code AS VARCHAR(128)) AND ACTIVE_FLAG = 'Y';

-- name: worker_attempt_outcome --
-- How one attempt a worker ran ended: its status and error.
SELECT STATUS AS status, ERROR_MESSAGE AS error_message
  FROM AUD_TASK_ATTEMPTS
 WHERE ATTEMPT_ID = :attempt_id;
