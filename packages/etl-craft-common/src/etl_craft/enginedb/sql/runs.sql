-- name: run_row --
-- One run with its pipeline's settings.
SELECT r.PIPELINE_RUN_ID AS pipeline_run_id, r.PIPELINE_ID AS pipeline_id, r.RUN_KEY AS run_key,
       r.TRIGGER_KIND AS trigger_kind, r.RUN_DATE AS run_date, r.STATUS AS status,
       r.OWNER_ID AS owner_id, r.LEASE_EXPIRES_AT AS lease_expires_at, r.START_DATE AS start_date,
       r.QUEUED_AT AS queued_at, r.END_DATE AS end_date, r.MESSAGE AS message,
       r.OUTPUT_REVISION AS output_revision, r.STARTED_BY AS started_by,
       p.PIPELINE_CODE AS pipeline_code, p.MAX_PARALLEL_TASKS AS max_parallel_tasks,
       p.SLA_MINUTES AS sla_minutes, p.PRIORITY AS priority, j.PROJECT_CODE AS project_code,
       j.DEFAULT_POOL AS default_pool, j.MAX_RUNNING_TASKS AS project_max_running_tasks
  FROM AUD_PIPELINES_RUN_LOG r
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE r.PIPELINE_RUN_ID = :pipeline_run_id;

-- name: run_task_runs --
-- The task runs of one run, each with its latest attempt.
SELECT t.TASK_RUN_ID AS task_run_id, t.TASK_ID AS task_id, t.STATUS AS status,
       t.ROWS_WRITTEN AS rows_written, t.ATTEMPT_COUNT AS attempt_count, t.MESSAGE AS message,
       t.ERROR_MESSAGE AS error_message, t.START_DATE AS start_date, t.END_DATE AS end_date,
       a.ATTEMPT_ID AS attempt_id, a.STATUS AS attempt_status, a.RETRYABLE AS retryable,
       a.ENDED_AT AS attempt_ended_at, a.NOT_BEFORE AS not_before, a.OWNER_ID AS owner_id,
       a.CANCEL_REQUESTED_AT AS cancel_requested_at
  FROM AUD_TASK_RUN_LOG t
  LEFT JOIN AUD_TASK_ATTEMPTS a ON a.ATTEMPT_ID = t.LATEST_ATTEMPT_ID
 WHERE t.PIPELINE_RUN_ID = :pipeline_run_id
 ORDER BY t.TASK_RUN_ID;

-- name: pipeline_tasks --
-- The active tasks of one pipeline.
SELECT k.TASK_ID AS task_id, k.TASK_CODE AS task_code, k.HANDLER AS handler,
       k.RUN_CONDITION AS run_condition, k.REQUIRED_COUNT AS required_count,
       p.PIPELINE_ID AS pipeline_id, p.PIPELINE_CODE AS pipeline_code
  FROM CFG_TASKS k JOIN CFG_PIPELINES p ON p.PIPELINE_ID = k.PIPELINE_ID
 WHERE k.PIPELINE_ID = :pipeline_id AND k.ACTIVE_FLAG = 'Y'
 ORDER BY k.TASK_ID;

-- name: pipeline_task_dependencies --
-- The active dependencies of one pipeline's active tasks, with their upstream's pipeline.
SELECT d.TASK_DEPENDENCY_ID AS task_dependency_id, d.TASK_ID AS task_id,
       d.DEPENDS_ON_TASK_ID AS depends_on_task_id, d.DEPENDENCY_TYPE AS dependency_type,
       d.CONSUME_REPAIRS AS consume_repairs, u.TASK_CODE AS upstream_task_code,
       u.PIPELINE_ID AS upstream_pipeline_id, up.PIPELINE_CODE AS upstream_pipeline_code
  FROM CFG_TASK_DEPENDENCY d
  JOIN CFG_TASKS k ON k.TASK_ID = d.TASK_ID
  JOIN CFG_TASKS u ON u.TASK_ID = d.DEPENDS_ON_TASK_ID
  JOIN CFG_PIPELINES up ON up.PIPELINE_ID = u.PIPELINE_ID
 WHERE k.PIPELINE_ID = :pipeline_id AND k.ACTIVE_FLAG = 'Y' AND d.ACTIVE_FLAG = 'Y'
 ORDER BY d.TASK_DEPENDENCY_ID;

-- name: pipeline_by_code --
-- The active pipeline with this code in a project.
SELECT p.PIPELINE_ID AS pipeline_id, p.PIPELINE_CODE AS pipeline_code, p.PRIORITY AS priority,
       p.ACTIVE_FLAG AS active_flag, j.PROJECT_ID AS project_id, j.TIMEZONE AS timezone
  FROM CFG_PIPELINES p JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = :project_code AND j.ACTIVE_FLAG = 'Y'
   AND p.PIPELINE_CODE = :pipeline_code AND p.ACTIVE_FLAG = 'Y';

-- name: pipeline_by_code_any --
-- The pipeline with this code in a project, active or not: its runs outlive its ACTIVE_FLAG.
SELECT p.PIPELINE_ID AS pipeline_id, p.PIPELINE_CODE AS pipeline_code, p.PRIORITY AS priority,
       p.ACTIVE_FLAG AS active_flag, j.PROJECT_ID AS project_id, j.TIMEZONE AS timezone
  FROM CFG_PIPELINES p JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = :project_code AND j.ACTIVE_FLAG = 'Y' AND p.PIPELINE_CODE = :pipeline_code;

-- name: live_runs_of_pipeline --
-- The non-terminal runs of one pipeline, oldest first.
SELECT PIPELINE_RUN_ID AS pipeline_run_id, RUN_KEY AS run_key, TRIGGER_KIND AS trigger_kind,
       RUN_DATE AS run_date, STATUS AS status, OWNER_ID AS owner_id,
       LEASE_EXPIRES_AT AS lease_expires_at
  FROM AUD_PIPELINES_RUN_LOG
 WHERE PIPELINE_ID = :pipeline_id AND STATUS IN ('QUEUED', 'IN-PROGRESS')
 ORDER BY PIPELINE_RUN_ID;

-- name: queued_attempts_of_run --
-- The QUEUED attempts of one run, oldest first, with their task.
SELECT a.ATTEMPT_ID AS attempt_id, a.ATTEMPT_NUMBER AS attempt_number, a.NOT_BEFORE AS not_before,
       a.QUEUED_AT AS queued_at, a.SLOT_KIND AS slot_kind, t.TASK_ID AS task_id,
       t.TASK_RUN_ID AS task_run_id
  FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
 WHERE t.PIPELINE_RUN_ID = :pipeline_run_id AND a.STATUS = 'QUEUED'
 ORDER BY a.PRIORITY DESC, a.QUEUED_AT, a.ATTEMPT_ID;

-- name: pipeline_task_parameters --
-- Every parameter of one pipeline's active tasks.
SELECT p.TASK_ID AS task_id, p.PARAMETER_NAME AS name, p.PARAMETER_VALUE AS value
  FROM CFG_TASK_PARAMETERS p JOIN CFG_TASKS k ON k.TASK_ID = p.TASK_ID
 WHERE k.PIPELINE_ID = :pipeline_id AND k.ACTIVE_FLAG = 'Y'
 ORDER BY p.TASK_ID, p.PARAMETER_NAME;

-- name: runs_of_pipeline --
-- The newest runs of one pipeline, newest first.
SELECT PIPELINE_RUN_ID AS pipeline_run_id, RUN_KEY AS run_key, TRIGGER_KIND AS trigger_kind,
       RUN_DATE AS run_date, STATUS AS status, START_DATE AS start_date, END_DATE AS end_date,
       STARTED_BY AS started_by
  FROM AUD_PIPELINES_RUN_LOG
 WHERE PIPELINE_ID = :pipeline_id
 ORDER BY PIPELINE_RUN_ID DESC
 LIMIT :limit;
