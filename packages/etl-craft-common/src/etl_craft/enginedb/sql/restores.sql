-- name: task_runs_of_run --
-- The task runs of one pipeline run, whose ids the Iceberg snapshots they committed carry.
SELECT TASK_RUN_ID AS task_run_id
  FROM AUD_TASK_RUN_LOG
 WHERE PIPELINE_RUN_ID = :pipeline_run_id;

-- name: run_exists --
-- Whether the pipeline run is on record.
SELECT COUNT(*) FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :pipeline_run_id;

-- name: running_writers_of --
-- Task runs in progress whose task writes the table (TARGET_OBJECT, compared in lower case).
SELECT r.TASK_RUN_ID AS task_run_id, t.TASK_CODE AS task_code
  FROM AUD_TASK_RUN_LOG r
  JOIN CFG_TASKS t ON t.TASK_ID = r.TASK_ID
  JOIN CFG_TASK_PARAMETERS p ON p.TASK_ID = r.TASK_ID AND p.PARAMETER_NAME = 'TARGET_OBJECT'
 WHERE r.STATUS = 'IN-PROGRESS' AND LOWER(TRIM(p.PARAMETER_VALUE)) = :target;
