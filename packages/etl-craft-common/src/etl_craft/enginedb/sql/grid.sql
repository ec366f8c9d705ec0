-- name: grid_runs --
-- One page of the project's runs, newest first, by pipeline, status, trigger kind and run date.
SELECT r.PIPELINE_RUN_ID AS pipeline_run_id, r.PIPELINE_ID AS pipeline_id,
       p.PIPELINE_CODE AS pipeline_code, r.RUN_KEY AS run_key, r.TRIGGER_KIND AS trigger_kind,
       r.RUN_DATE AS run_date, r.STATUS AS status, r.START_DATE AS start_date,
       r.END_DATE AS end_date, r.STARTED_BY AS started_by
  FROM AUD_PIPELINES_RUN_LOG r
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = CAST(:project_code AS VARCHAR(128))
   AND r.PIPELINE_RUN_ID < :before
   AND r.RUN_DATE >= :since AND r.RUN_DATE <= :until
   AND (CAST(:pipeline_code AS VARCHAR(128)) IS NULL
        OR p.PIPELINE_CODE = CAST(:pipeline_code AS VARCHAR(128)))
   AND (CAST(:status AS VARCHAR(32)) IS NULL OR r.STATUS = CAST(:status AS VARCHAR(32)))
   AND (CAST(:trigger_kind AS VARCHAR(32)) IS NULL
        OR r.TRIGGER_KIND = CAST(:trigger_kind AS VARCHAR(32)))
 ORDER BY r.PIPELINE_RUN_ID DESC
 LIMIT :limit;

-- name: grid_task_runs --
-- The task runs of a page of runs, with their task's code and latest attempt, and when that attempt started and ended.
SELECT t.PIPELINE_RUN_ID AS pipeline_run_id, t.TASK_ID AS task_id, k.TASK_CODE AS task_code,
       t.STATUS AS status, t.ATTEMPT_COUNT AS attempt_count, t.ROWS_WRITTEN AS rows_written,
       t.LATEST_ATTEMPT_ID AS attempt_id, a.STARTED_AT AS attempt_started_at,
       a.ENDED_AT AS attempt_ended_at
  FROM AUD_TASK_RUN_LOG t
  JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID
  LEFT JOIN AUD_TASK_ATTEMPTS a ON a.ATTEMPT_ID = t.LATEST_ATTEMPT_ID
 WHERE t.PIPELINE_RUN_ID IN :run_id_list
 ORDER BY t.PIPELINE_RUN_ID, t.TASK_ID;

-- name: grid_tasks --
-- The active tasks of some pipelines, in each pipeline's task order: the grid's columns.
SELECT k.PIPELINE_ID AS pipeline_id, k.TASK_ID AS task_id, k.TASK_CODE AS task_code
  FROM CFG_TASKS k
 WHERE k.PIPELINE_ID IN :pipeline_id_list AND k.ACTIVE_FLAG = 'Y'
 ORDER BY k.PIPELINE_ID, k.TASK_ID;

-- name: run_attempts --
-- Every attempt of one run's task runs, by task run and attempt number.
SELECT a.ATTEMPT_ID AS attempt_id, a.TASK_RUN_ID AS task_run_id, k.TASK_CODE AS task_code,
       a.ATTEMPT_NUMBER AS attempt_number, a.STATUS AS status, a.QUEUED_AT AS queued_at,
       a.STARTED_AT AS started_at, a.ENDED_AT AS ended_at, a.EXIT_CODE AS exit_code,
       a.ROWS_WRITTEN AS rows_written, a.OWNER_ID AS owner_id, a.HOST AS host,
       a.ERROR_MESSAGE AS error, a.REQUESTED_BY AS requested_by
  FROM AUD_TASK_ATTEMPTS a
  JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
  JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID
 WHERE t.PIPELINE_RUN_ID = :pipeline_run_id
 ORDER BY a.TASK_RUN_ID, a.ATTEMPT_NUMBER;
