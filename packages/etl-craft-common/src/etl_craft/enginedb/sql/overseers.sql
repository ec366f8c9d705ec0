-- name: register_overseer --
-- The overseer that just took the lead records itself.
INSERT INTO AUD_OVERSEERS (OVERSEER_ID, HOST, PID, VERSION, STARTED_AT, HEARTBEAT_AT)
VALUES (:overseer_id, :host, :pid, :version, etl_craft_now(), etl_craft_now());

-- name: beat_overseer --
-- The leading overseer's heartbeat.
UPDATE AUD_OVERSEERS SET HEARTBEAT_AT = etl_craft_now() WHERE OVERSEER_ID = :overseer_id;

-- name: stop_overseer --
-- The overseer stopped cleanly.
UPDATE AUD_OVERSEERS SET STOPPED_AT = etl_craft_now(), HEARTBEAT_AT = etl_craft_now()
 WHERE OVERSEER_ID = :overseer_id;

-- name: latest_overseer --
-- The overseer that beat last and has not stopped: the one a second server names.
SELECT OVERSEER_ID AS overseer_id, HOST AS host, PID AS pid, HEARTBEAT_AT AS heartbeat_at
  FROM AUD_OVERSEERS WHERE STOPPED_AT IS NULL
 ORDER BY HEARTBEAT_AT DESC LIMIT 1;

-- name: overseer_runs --
-- Live runs an overseer looks at, most urgent first, with who holds them.
SELECT PIPELINE_RUN_ID AS pipeline_run_id, PIPELINE_ID AS pipeline_id, STATUS AS status,
       OWNER_ID AS owner_id, LEASE_EXPIRES_AT AS lease_expires_at, QUEUED_AT AS queued_at,
       CASE WHEN LEASE_EXPIRES_AT < etl_craft_now() THEN 1 ELSE 0 END AS lease_expired
  FROM AUD_PIPELINES_RUN_LOG
 WHERE STATUS IN ('QUEUED', 'IN-PROGRESS')
 ORDER BY PRIORITY DESC, QUEUED_AT, PIPELINE_RUN_ID;

-- name: first_overseer_start --
-- When an overseer first took the lead on this Engine DB; NULL before any did.
SELECT min(STARTED_AT) AS started_at FROM AUD_OVERSEERS;
