-- name: transition_register_worker --
-- Record a worker agent that starts claiming from its pool, ACTIVE; each start has an id of its own.
INSERT INTO AUD_WORKERS (WORKER_ID, POOL, HOST, PID, VERSION, SCHEMA_VERSION, INGESTION_SLOTS,
                         WAREHOUSE_SLOTS, STARTED_AT, HEARTBEAT_AT, STATUS, LOG_ENDPOINT)
VALUES (:worker_id, :pool, :host, :pid, :version, :schema_version, :ingestion_slots,
        :warehouse_slots, etl_craft_now(), etl_craft_now(), 'ACTIVE', :log_endpoint)
RETURNING WORKER_ID AS worker_id, STATUS AS status;

-- name: transition_beat_worker --
-- Heartbeat an ACTIVE or DRAINING worker and renew the lease of every live attempt it owns, in one statement; a GONE worker renews nothing. One row at least: the worker's status (NULL: no such worker), then the renewed attempts and their cancel requests.
WITH worker AS (
    UPDATE AUD_WORKERS SET HEARTBEAT_AT = etl_craft_now()
     WHERE WORKER_ID = :worker_id AND STATUS IN ('ACTIVE', 'DRAINING')
    RETURNING STATUS
), renewed AS (
    UPDATE AUD_TASK_ATTEMPTS
       SET LEASE_EXPIRES_AT = etl_craft_add_seconds(etl_craft_now(), :lease_seconds),
           HEARTBEAT_AT = etl_craft_now()
     WHERE OWNER_ID = :worker_id AND STATUS IN ('CLAIMED', 'RUNNING') AND EXISTS (SELECT 1 FROM worker)
    RETURNING ATTEMPT_ID, CANCEL_REQUESTED_AT
)
SELECT coalesce((SELECT STATUS FROM worker),
                (SELECT STATUS FROM AUD_WORKERS WHERE WORKER_ID = :worker_id)) AS worker_status,
       r.ATTEMPT_ID AS attempt_id, r.CANCEL_REQUESTED_AT AS cancel_requested_at
  FROM (SELECT 1) AS answer LEFT JOIN renewed r ON TRUE
 ORDER BY r.ATTEMPT_ID;

-- name: transition_drain_worker --
-- ACTIVE -> DRAINING: the worker finishes what it runs and claims nothing new.
UPDATE AUD_WORKERS
   SET STATUS = 'DRAINING'
 WHERE WORKER_ID = :worker_id AND STATUS = 'ACTIVE'
RETURNING WORKER_ID AS worker_id, STATUS AS status;

-- name: transition_retire_worker --
-- ACTIVE or DRAINING -> GONE by the worker itself as it stops; a GONE worker stays gone.
UPDATE AUD_WORKERS
   SET STATUS = 'GONE', STOPPED_AT = etl_craft_now()
 WHERE WORKER_ID = :worker_id AND STATUS IN ('ACTIVE', 'DRAINING')
RETURNING WORKER_ID AS worker_id, STATUS AS status;

-- name: transition_mark_silent_workers_gone --
-- ACTIVE or DRAINING -> GONE for every worker whose last heartbeat is older than :silence_seconds, stopped as of that heartbeat.
UPDATE AUD_WORKERS
   SET STATUS = 'GONE', STOPPED_AT = HEARTBEAT_AT
 WHERE STATUS IN ('ACTIVE', 'DRAINING')
   AND HEARTBEAT_AT < etl_craft_add_seconds(etl_craft_now(), -1 * :silence_seconds)
RETURNING WORKER_ID AS worker_id, STATUS AS status;

-- name: worker_state --
-- What a refused worker transition found: the worker's status and last heartbeat.
SELECT WORKER_ID AS worker_id, STATUS AS status, HEARTBEAT_AT AS heartbeat_at
  FROM AUD_WORKERS WHERE WORKER_ID = :worker_id;
