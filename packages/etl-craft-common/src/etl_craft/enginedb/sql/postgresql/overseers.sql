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
