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
-- Live runs an overseer looks at, most urgent first, with who holds them and whether a queued one has pipeline gates.
SELECT r.PIPELINE_RUN_ID AS pipeline_run_id, r.PIPELINE_ID AS pipeline_id, r.STATUS AS status,
       r.OWNER_ID AS owner_id, r.LEASE_EXPIRES_AT AS lease_expires_at, r.QUEUED_AT AS queued_at,
       CASE WHEN r.LEASE_EXPIRES_AT < etl_craft_now() THEN 1 ELSE 0 END AS lease_expired,
       CASE WHEN r.STATUS = 'QUEUED' AND EXISTS (
                SELECT 1 FROM CFG_PIPELINE_DEPENDENCY d
                  JOIN CFG_PIPELINES u ON u.PIPELINE_ID = d.DEPENDS_ON_PIPELINE_ID
                 WHERE d.PIPELINE_ID = r.PIPELINE_ID AND d.ACTIVE_FLAG = 'Y')
            THEN 1 ELSE 0 END AS gated
  FROM AUD_PIPELINES_RUN_LOG r
 WHERE r.STATUS IN ('QUEUED', 'IN-PROGRESS')
 ORDER BY r.PRIORITY DESC, r.QUEUED_AT, r.PIPELINE_RUN_ID;

-- name: first_overseer_start --
-- When an overseer first took the lead on this Engine DB; NULL before any did.
SELECT min(STARTED_AT) AS started_at FROM AUD_OVERSEERS;

-- name: latest_metadata_change --
-- The newest change to any CFG_ row (NULL before any): while it stays, the metadata has not changed.
SELECT max(CHANGE_ID) AS change_id FROM AUD_METADATA_CHANGES;
