-- name: try_overseer_lock --
-- Leadership: a session lock held as long as the leading overseer's dedicated connection lives.
SELECT pg_try_advisory_lock(hashtextextended('etl_craft.overseer', 0)) AS locked;

-- name: listen_events --
-- Wake on transitions' notifications.
LISTEN etl_craft_events;

-- name: overseer_runs_of_news --
-- The runs that notified attempts and task runs belong to (ids as JSON arrays).
SELECT DISTINCT t.PIPELINE_RUN_ID AS pipeline_run_id
  FROM AUD_TASK_RUN_LOG t
 WHERE t.TASK_RUN_ID IN (SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(:task_run_ids AS JSON)))
    OR t.TASK_RUN_ID IN (
       SELECT a.TASK_RUN_ID FROM AUD_TASK_ATTEMPTS a
        WHERE a.ATTEMPT_ID IN (SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(:attempt_ids AS JSON))));

-- name: hold_leadership --
-- A leader-only write goes on only while its epoch is the current one; the share lock keeps a takeover waiting until the write commits, so no write of an older epoch lands after it.
SELECT EPOCH AS epoch FROM AUD_LEADERSHIP WHERE LEADER_ROLE = 'overseer' AND EPOCH = :epoch FOR SHARE;

-- name: leadership_session_alive --
-- The leader's lock session still answers: PostgreSQL frees a session's advisory locks only when it ends.
SELECT 1 AS alive;

-- name: try_clone_lock --
-- The clone lock: at most one clone copies into the mirror at a time, whichever process runs it.
SELECT pg_try_advisory_lock(hashtextextended('etl_craft.clone', 0)) AS locked;

-- name: clone_unlock --
-- Release the clone lock before its session goes back to the pool.
SELECT pg_advisory_unlock(hashtextextended('etl_craft.clone', 0)) AS released;
