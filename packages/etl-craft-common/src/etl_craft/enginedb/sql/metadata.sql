-- name: metadata_project --
-- The active project with this code: its id and time zone.
SELECT PROJECT_ID AS project_id, PROJECT_CODE AS project_code, TIMEZONE AS timezone
  FROM CFG_PROJECTS
 WHERE PROJECT_CODE = CAST(:project_code AS VARCHAR(128)) AND ACTIVE_FLAG = 'Y';

-- name: metadata_active_projects --
-- The codes of every active project, in order.
SELECT PROJECT_CODE AS project_code FROM CFG_PROJECTS WHERE ACTIVE_FLAG = 'Y' ORDER BY PROJECT_CODE;

-- name: metadata_pipelines --
-- Every pipeline of a project, active or not (dependencies may point at inactive ones).
SELECT PIPELINE_ID AS pipeline_id, PIPELINE_CODE AS pipeline_code, DESCRIPTION AS description,
       RUN_SCHEDULE AS run_schedule, SCHEDULE_TIMEZONE AS schedule_timezone,
       ACTIVE_FLAG AS active_flag
  FROM CFG_PIPELINES
 WHERE PROJECT_ID = :project_id
 ORDER BY PIPELINE_CODE, PIPELINE_ID;

-- name: metadata_tasks --
-- Every task of a project's pipelines, active or not.
SELECT t.TASK_ID AS task_id, t.PIPELINE_ID AS pipeline_id, t.TASK_CODE AS task_code,
       t.HANDLER AS handler, t.RUN_CONDITION AS run_condition,
       t.REQUIRED_COUNT AS required_count, t.ACTIVE_FLAG AS active_flag
  FROM CFG_TASKS t
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID
 WHERE p.PROJECT_ID = :project_id
 ORDER BY t.PIPELINE_ID, t.TASK_CODE, t.TASK_ID;

-- name: metadata_task_parameters --
-- Every parameter of every task of a project.
SELECT tp.TASK_ID AS task_id, tp.PARAMETER_NAME AS name, tp.PARAMETER_VALUE AS value
  FROM CFG_TASK_PARAMETERS tp
  JOIN CFG_TASKS t ON t.TASK_ID = tp.TASK_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID
 WHERE p.PROJECT_ID = :project_id
 ORDER BY tp.TASK_ID, tp.PARAMETER_NAME;

-- name: metadata_pipeline_parameters --
-- Every typed parameter of every pipeline of a project.
SELECT pp.PIPELINE_ID AS pipeline_id, pp.PARAMETER_NAME AS name,
       pp.PARAMETER_VALUE AS value, pp.PARAMETER_TYPE AS type
  FROM CFG_PIPELINE_PARAMETERS pp
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = pp.PIPELINE_ID
 WHERE p.PROJECT_ID = :project_id
 ORDER BY pp.PIPELINE_ID, pp.PARAMETER_NAME;

-- name: metadata_task_dependencies --
-- Every active task dependency of a project's tasks, with the upstream's codes and flags.
SELECT d.TASK_DEPENDENCY_ID AS dependency_id, d.TASK_ID AS task_id,
       d.DEPENDS_ON_TASK_ID AS upstream_task_id, d.DEPENDENCY_TYPE AS dependency_type,
       u.TASK_CODE AS upstream_task_code, u.HANDLER AS upstream_handler,
       u.ACTIVE_FLAG AS upstream_task_active, up.PIPELINE_ID AS upstream_pipeline_id,
       up.PIPELINE_CODE AS upstream_pipeline_code, up.ACTIVE_FLAG AS upstream_pipeline_active
  FROM CFG_TASK_DEPENDENCY d
  JOIN CFG_TASKS t ON t.TASK_ID = d.TASK_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID
  JOIN CFG_TASKS u ON u.TASK_ID = d.DEPENDS_ON_TASK_ID
  JOIN CFG_PIPELINES up ON up.PIPELINE_ID = u.PIPELINE_ID
 WHERE p.PROJECT_ID = :project_id AND d.ACTIVE_FLAG = 'Y'
 ORDER BY d.TASK_ID, d.TASK_DEPENDENCY_ID;

-- name: metadata_pipeline_dependencies --
-- Every active pipeline dependency of a project's pipelines, with the upstream's code and flag,
-- and the upstream's project when it is another one.
SELECT d.PIPELINE_DEPENDENCY_ID AS dependency_id, d.PIPELINE_ID AS pipeline_id,
       d.DEPENDS_ON_PIPELINE_ID AS upstream_pipeline_id, d.DEPENDENCY_TYPE AS dependency_type,
       u.PIPELINE_CODE AS upstream_pipeline_code, u.ACTIVE_FLAG AS upstream_pipeline_active,
       CASE WHEN u.PROJECT_ID <> p.PROJECT_ID THEN uj.PROJECT_CODE END AS upstream_project_code
  FROM CFG_PIPELINE_DEPENDENCY d
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = d.PIPELINE_ID
  JOIN CFG_PIPELINES u ON u.PIPELINE_ID = d.DEPENDS_ON_PIPELINE_ID
  JOIN CFG_PROJECTS uj ON uj.PROJECT_ID = u.PROJECT_ID
 WHERE p.PROJECT_ID = :project_id AND d.ACTIVE_FLAG = 'Y'
 ORDER BY d.PIPELINE_ID, d.PIPELINE_DEPENDENCY_ID;

-- name: metadata_pipeline_edges --
-- Every active pipeline dependency between active pipelines of every project, for cycles that
-- run through several projects.
SELECT d.PIPELINE_ID AS pipeline_id, d.DEPENDS_ON_PIPELINE_ID AS upstream_pipeline_id,
       j.PROJECT_CODE AS project_code, p.PIPELINE_CODE AS pipeline_code
  FROM CFG_PIPELINE_DEPENDENCY d
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = d.PIPELINE_ID
  JOIN CFG_PIPELINES u ON u.PIPELINE_ID = d.DEPENDS_ON_PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE d.ACTIVE_FLAG = 'Y' AND p.ACTIVE_FLAG = 'Y' AND u.ACTIVE_FLAG = 'Y'
 ORDER BY d.PIPELINE_ID, d.DEPENDS_ON_PIPELINE_ID;

-- name: metadata_business_rules --
-- Every active business rule of a project's tasks.
SELECT r.BUSINESS_RULE_ID AS rule_id, r.TASK_ID AS task_id, r.RULE_CODE AS rule_code,
       r.RULE_TYPE AS rule_type, r.TARGET_TABLE AS target_table,
       r.KEY_COLUMNS AS key_columns, r.RULE_SQL AS rule_sql, r.WAVE AS wave
  FROM CFG_BUSINESS_RULES r
  JOIN CFG_TASKS t ON t.TASK_ID = r.TASK_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID
 WHERE p.PROJECT_ID = :project_id AND r.ACTIVE_FLAG = 'Y'
 ORDER BY r.TASK_ID, r.WAVE, r.RULE_CODE;

-- name: metadata_last_runs --
-- The run with the highest id of each pipeline of a project, for display only.
SELECT r.PIPELINE_ID AS pipeline_id, r.PIPELINE_RUN_ID AS pipeline_run_id,
       r.STATUS AS status, r.RUN_DATE AS run_date, r.END_DATE AS end_date
  FROM AUD_PIPELINES_RUN_LOG r
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
 WHERE p.PROJECT_ID = :project_id
   AND r.PIPELINE_RUN_ID = (SELECT MAX(l.PIPELINE_RUN_ID) FROM AUD_PIPELINES_RUN_LOG l
                             WHERE l.PIPELINE_ID = r.PIPELINE_ID);

-- name: metadata_open_pauses --
-- The pauses of a project not yet resumed; a NULL pipeline id pauses the whole project.
SELECT PIPELINE_ID AS pipeline_id, REASON AS reason, PAUSED_AT AS paused_at,
       PAUSED_BY AS paused_by
  FROM AUD_PIPELINE_PAUSES
 WHERE PROJECT_ID = :project_id AND RESUMED_AT IS NULL;
