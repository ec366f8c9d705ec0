-- name: worker_register --
-- Record a worker agent that starts claiming from its pool.
INSERT INTO AUD_WORKERS (WORKER_ID, POOL, HOST, PID, VERSION, SCHEMA_VERSION, INGESTION_SLOTS,
                         WAREHOUSE_SLOTS, STARTED_AT, HEARTBEAT_AT, STATUS)
VALUES (:worker_id, :pool, :host, :pid, :version, :schema_version, :ingestion_slots,
        :warehouse_slots, etl_craft_now(), etl_craft_now(), 'ACTIVE')
RETURNING WORKER_ID AS worker_id;

-- name: worker_beat --
-- Heartbeat a worker and renew the leases of every attempt it owns, in one statement; returns those attempts and their cancel requests.
WITH worker AS (
    UPDATE AUD_WORKERS SET HEARTBEAT_AT = etl_craft_now()
     WHERE WORKER_ID = :worker_id
    RETURNING STATUS
), renewed AS (
    UPDATE AUD_TASK_ATTEMPTS
       SET LEASE_EXPIRES_AT = etl_craft_add_seconds(etl_craft_now(), :lease_seconds),
           HEARTBEAT_AT = etl_craft_now()
     WHERE OWNER_ID = :worker_id AND STATUS IN ('CLAIMED', 'RUNNING')
    RETURNING ATTEMPT_ID, CANCEL_REQUESTED_AT
)
SELECT w.STATUS AS worker_status, r.ATTEMPT_ID AS attempt_id,
       r.CANCEL_REQUESTED_AT AS cancel_requested_at
  FROM worker w LEFT JOIN renewed r ON TRUE
 ORDER BY r.ATTEMPT_ID;

-- name: worker_set_status --
-- A worker starts draining or is gone; a GONE worker stays gone.
UPDATE AUD_WORKERS
   SET STATUS = CAST(:status AS VARCHAR(16)),
       STOPPED_AT = CASE WHEN CAST(:status AS VARCHAR(16)) = 'GONE' THEN etl_craft_now() END
 WHERE WORKER_ID = :worker_id AND STATUS <> 'GONE'
RETURNING WORKER_ID AS worker_id;

-- name: worker_mark_silent_gone --
-- Workers whose last heartbeat is older than :silence_seconds are GONE, stopped as of that heartbeat.
UPDATE AUD_WORKERS
   SET STATUS = 'GONE', STOPPED_AT = HEARTBEAT_AT
 WHERE STATUS <> 'GONE'
   AND HEARTBEAT_AT < etl_craft_add_seconds(etl_craft_now(), -1 * :silence_seconds)
RETURNING WORKER_ID AS worker_id;

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
