-- name: runs_of_pipeline_before --
-- A page of one pipeline's runs older than a run id, newest first.
SELECT PIPELINE_RUN_ID AS pipeline_run_id, RUN_KEY AS run_key, TRIGGER_KIND AS trigger_kind,
       RUN_DATE AS run_date, STATUS AS status, START_DATE AS start_date, END_DATE AS end_date,
       STARTED_BY AS started_by
  FROM AUD_PIPELINES_RUN_LOG
 WHERE PIPELINE_ID = :pipeline_id AND PIPELINE_RUN_ID < :before
 ORDER BY PIPELINE_RUN_ID DESC
 LIMIT :limit;

-- name: attempt_view --
-- One attempt with its task, run and pipeline, as the attempt view shows it.
SELECT a.ATTEMPT_ID AS attempt_id, a.ATTEMPT_NUMBER AS attempt_number, a.STATUS AS status,
       a.TASK_RUN_ID AS task_run_id, t.PIPELINE_RUN_ID AS run_id, p.PIPELINE_CODE AS pipeline_code,
       k.TASK_CODE AS task_code, a.POOL AS pool, a.SLOT_KIND AS slot_kind,
       a.QUEUED_AT AS queued_at, a.NOT_BEFORE AS not_before, a.STARTED_AT AS started_at,
       a.ENDED_AT AS ended_at, a.OWNER_ID AS owner_id, a.HOST AS host, a.EXIT_CODE AS exit_code,
       a.ROWS_WRITTEN AS rows_written, a.ERROR_MESSAGE AS error, a.OUTCOME_SOURCE AS outcome_source,
       a.REQUESTED_BY AS requested_by, a.ENDED_BY AS ended_by,
       a.CANCEL_REQUESTED_AT AS cancel_requested_at, a.LOG_PATH AS log_path,
       a.LEASE_EXPIRES_AT AS lease_expires_at
  FROM AUD_TASK_ATTEMPTS a
  JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = t.PIPELINE_RUN_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
  JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE a.ATTEMPT_ID = :attempt_id AND j.PROJECT_CODE = CAST(:project_code AS VARCHAR(128));

-- name: run_pipeline_code --
-- The pipeline code of a run of the project, found by the run's id alone.
SELECT p.PIPELINE_CODE AS pipeline_code
  FROM AUD_PIPELINES_RUN_LOG r
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE r.PIPELINE_RUN_ID = :run_id AND j.PROJECT_CODE = CAST(:project_code AS VARCHAR(128));

-- name: project_parameter_values --
-- Every set task and pipeline parameter of the project, by name, so secrets can be masked.
SELECT x.PARAMETER_NAME AS name, x.PARAMETER_VALUE AS value
  FROM CFG_TASK_PARAMETERS x
  JOIN CFG_TASKS k ON k.TASK_ID = x.TASK_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = k.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = CAST(:project_code AS VARCHAR(128)) AND x.PARAMETER_VALUE IS NOT NULL
UNION ALL
SELECT y.PARAMETER_NAME, y.PARAMETER_VALUE
  FROM CFG_PIPELINE_PARAMETERS y
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = y.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = CAST(:project_code AS VARCHAR(128)) AND y.PARAMETER_VALUE IS NOT NULL;

-- name: latest_attempt_of_task --
-- The newest attempt of a task, by its code, in a run of the project.
SELECT a.ATTEMPT_ID AS attempt_id
  FROM AUD_TASK_ATTEMPTS a
  JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = t.PIPELINE_RUN_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
  JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE r.PIPELINE_RUN_ID = :run_id AND k.TASK_CODE = CAST(:task_code AS VARCHAR(128))
   AND j.PROJECT_CODE = CAST(:project_code AS VARCHAR(128))
 ORDER BY a.ATTEMPT_ID DESC
 LIMIT 1;
