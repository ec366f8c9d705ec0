-- name: edit_pipelines --
-- The metadata editor's view of an active pipeline of a project: its code and editable fields.
SELECT p.PIPELINE_CODE AS pipeline, p.DESCRIPTION AS description,
       p.RUN_SCHEDULE AS run_schedule, p.SCHEDULE_TIMEZONE AS schedule_timezone,
       p.CATCHUP AS catchup, p.MAX_CATCHUP_RUNS AS max_catchup_runs,
       p.OVERLAP_POLICY AS overlap_policy, p.PRIORITY AS priority,
       p.MAX_PARALLEL_TASKS AS max_parallel_tasks, p.SLA_MINUTES AS sla_minutes,
       p.ACTIVE_FLAG AS active_flag
  FROM CFG_PIPELINES p
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = :project_code AND j.ACTIVE_FLAG = 'Y'
   AND p.PIPELINE_CODE = :pipeline_code AND p.ACTIVE_FLAG = 'Y';

-- name: edit_pipeline_parameters --
-- The metadata editor's view of an active pipeline's parameters.
SELECT p.PIPELINE_CODE AS pipeline, x.PARAMETER_NAME AS parameter,
       x.PARAMETER_VALUE AS parameter_value, x.PARAMETER_TYPE AS parameter_type
  FROM CFG_PIPELINE_PARAMETERS x
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = x.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = :project_code AND j.ACTIVE_FLAG = 'Y'
   AND p.PIPELINE_CODE = :pipeline_code AND p.ACTIVE_FLAG = 'Y'
 ORDER BY x.PARAMETER_NAME;

-- name: edit_pipeline_dependencies --
-- The metadata editor's view of an active pipeline's active dependencies on other pipelines.
SELECT p.PIPELINE_CODE AS pipeline, up.PIPELINE_CODE AS upstream_pipeline,
       x.DEPENDENCY_TYPE AS dependency_type, x.CONSUME_REPAIRS AS consume_repairs,
       x.ACTIVE_FLAG AS active_flag
  FROM CFG_PIPELINE_DEPENDENCY x
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = x.PIPELINE_ID
  JOIN CFG_PIPELINES up ON up.PIPELINE_ID = x.DEPENDS_ON_PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = :project_code AND j.ACTIVE_FLAG = 'Y'
   AND p.PIPELINE_CODE = :pipeline_code AND p.ACTIVE_FLAG = 'Y' AND x.ACTIVE_FLAG = 'Y'
 ORDER BY up.PIPELINE_CODE;

-- name: edit_tasks --
-- The metadata editor's view of an active pipeline's active tasks.
SELECT p.PIPELINE_CODE AS pipeline, x.TASK_CODE AS task, x.DESCRIPTION AS description,
       x.HANDLER AS handler, x.RUN_CONDITION AS run_condition,
       x.REQUIRED_COUNT AS required_count, x.ACTIVE_FLAG AS active_flag
  FROM CFG_TASKS x
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = x.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = :project_code AND j.ACTIVE_FLAG = 'Y'
   AND p.PIPELINE_CODE = :pipeline_code AND p.ACTIVE_FLAG = 'Y' AND x.ACTIVE_FLAG = 'Y'
 ORDER BY x.TASK_CODE;

-- name: edit_task_parameters --
-- The metadata editor's view of the parameters of an active pipeline's active tasks.
SELECT p.PIPELINE_CODE AS pipeline, t.TASK_CODE AS task, x.PARAMETER_NAME AS parameter,
       x.PARAMETER_VALUE AS parameter_value
  FROM CFG_TASK_PARAMETERS x
  JOIN CFG_TASKS t ON t.TASK_ID = x.TASK_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = :project_code AND j.ACTIVE_FLAG = 'Y'
   AND p.PIPELINE_CODE = :pipeline_code AND p.ACTIVE_FLAG = 'Y' AND t.ACTIVE_FLAG = 'Y'
 ORDER BY t.TASK_CODE, x.PARAMETER_NAME;

-- name: edit_task_dependencies --
-- The metadata editor's view of the active dependencies of an active pipeline's active tasks.
SELECT p.PIPELINE_CODE AS pipeline, t.TASK_CODE AS task,
       up.PIPELINE_CODE AS upstream_pipeline, u.TASK_CODE AS upstream_task,
       x.DEPENDENCY_TYPE AS dependency_type, x.CONSUME_REPAIRS AS consume_repairs,
       x.ACTIVE_FLAG AS active_flag
  FROM CFG_TASK_DEPENDENCY x
  JOIN CFG_TASKS t ON t.TASK_ID = x.TASK_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID
  JOIN CFG_TASKS u ON u.TASK_ID = x.DEPENDS_ON_TASK_ID
  JOIN CFG_PIPELINES up ON up.PIPELINE_ID = u.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = :project_code AND j.ACTIVE_FLAG = 'Y'
   AND p.PIPELINE_CODE = :pipeline_code AND p.ACTIVE_FLAG = 'Y' AND t.ACTIVE_FLAG = 'Y'
   AND x.ACTIVE_FLAG = 'Y'
 ORDER BY t.TASK_CODE, up.PIPELINE_CODE, u.TASK_CODE;

-- name: edit_business_rules --
-- The metadata editor's view of the active business rules of an active pipeline's active tasks.
SELECT p.PIPELINE_CODE AS pipeline, t.TASK_CODE AS task, x.RULE_CODE AS rule,
       x.RULE_TYPE AS rule_type, x.TARGET_TABLE AS target_table,
       x.KEY_COLUMNS AS key_columns, x.RULE_SQL AS rule_sql, x.WAVE AS wave,
       x.DESCRIPTION AS description, x.ACTIVE_FLAG AS active_flag
  FROM CFG_BUSINESS_RULES x
  JOIN CFG_TASKS t ON t.TASK_ID = x.TASK_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = :project_code AND j.ACTIVE_FLAG = 'Y'
   AND p.PIPELINE_CODE = :pipeline_code AND p.ACTIVE_FLAG = 'Y' AND t.ACTIVE_FLAG = 'Y'
   AND x.ACTIVE_FLAG = 'Y'
 ORDER BY t.TASK_CODE, x.WAVE, x.RULE_CODE;
