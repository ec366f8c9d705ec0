-- name: register_overseer --
-- The overseer that just took the lead records itself (again, when it leads anew after standing by).
INSERT INTO AUD_OVERSEERS (OVERSEER_ID, HOST, PID, VERSION, STARTED_AT, HEARTBEAT_AT)
VALUES (:overseer_id, :host, :pid, :version, etl_craft_now(), etl_craft_now())
ON CONFLICT (OVERSEER_ID) DO UPDATE
   SET STARTED_AT = excluded.STARTED_AT, HEARTBEAT_AT = excluded.HEARTBEAT_AT, STOPPED_AT = NULL;

-- name: beat_overseer --
-- The leading overseer's heartbeat, only while it holds the current leadership epoch: a former leader's beat changes nothing.
UPDATE AUD_OVERSEERS SET HEARTBEAT_AT = etl_craft_now()
 WHERE OVERSEER_ID = :overseer_id
   AND EXISTS (SELECT 1 FROM AUD_LEADERSHIP l
                WHERE l.LEADER_ROLE = 'overseer' AND l.OVERSEER_ID = :overseer_id);

-- name: stop_overseer --
-- The overseer stopped cleanly.
UPDATE AUD_OVERSEERS SET STOPPED_AT = etl_craft_now(), HEARTBEAT_AT = etl_craft_now()
 WHERE OVERSEER_ID = :overseer_id;

-- name: latest_overseer --
-- The overseer that holds the current leadership epoch, else the one that beat last, and has not stopped: the one a second server names.
SELECT o.OVERSEER_ID AS overseer_id, o.HOST AS host, o.PID AS pid, o.HEARTBEAT_AT AS heartbeat_at
  FROM AUD_OVERSEERS o
  LEFT JOIN AUD_LEADERSHIP l ON l.OVERSEER_ID = o.OVERSEER_ID
 WHERE o.STOPPED_AT IS NULL
 ORDER BY CASE WHEN l.OVERSEER_ID IS NULL THEN 1 ELSE 0 END, o.HEARTBEAT_AT DESC LIMIT 1;

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

-- name: take_leadership --
-- The overseer that just took the leadership lock starts the next epoch; every earlier leader's writes are refused from its commit on.
INSERT INTO AUD_LEADERSHIP (LEADER_ROLE, EPOCH, OVERSEER_ID, TAKEN_AT)
VALUES ('overseer', 1, :overseer_id, etl_craft_now())
ON CONFLICT (LEADER_ROLE) DO UPDATE
   SET EPOCH = AUD_LEADERSHIP.EPOCH + 1, OVERSEER_ID = excluded.OVERSEER_ID, TAKEN_AT = excluded.TAKEN_AT
RETURNING EPOCH AS epoch;

-- name: hold_leadership --
-- A leader-only write goes on only while its epoch is the current one (SQLite: the write lock already keeps a takeover out until it commits).
SELECT EPOCH AS epoch FROM AUD_LEADERSHIP WHERE LEADER_ROLE = 'overseer' AND EPOCH = :epoch;

-- name: current_leadership --
-- Who holds the current epoch, and since when; none before any overseer led.
SELECT EPOCH AS epoch, OVERSEER_ID AS overseer_id, TAKEN_AT AS taken_at
  FROM AUD_LEADERSHIP WHERE LEADER_ROLE = 'overseer';
