-- name: catalog_shown_runs --
-- The newest :per_pipeline runs of every pipeline of a project (window over the indexed range).
SELECT r.PIPELINE_ID AS pipeline_id, r.PIPELINE_RUN_ID AS pipeline_run_id, r.RUN_KEY AS run_key,
       r.TRIGGER_KIND AS trigger_kind, r.RUN_DATE AS run_date, r.STATUS AS status,
       r.START_DATE AS start_date, r.END_DATE AS end_date
  FROM (SELECT l.*, ROW_NUMBER() OVER (PARTITION BY l.PIPELINE_ID
                                         ORDER BY l.PIPELINE_RUN_ID DESC) AS shown
          FROM AUD_PIPELINES_RUN_LOG l
          JOIN CFG_PIPELINES p ON p.PIPELINE_ID = l.PIPELINE_ID
         WHERE p.PROJECT_ID = :project_id) r
 WHERE r.shown <= :per_pipeline
 ORDER BY r.PIPELINE_ID, r.PIPELINE_RUN_ID DESC;

-- name: catalog_shown_task_runs --
-- The task runs of the runs catalog_shown_runs returns, with their row counts.
SELECT t.PIPELINE_RUN_ID AS pipeline_run_id, t.TASK_ID AS task_id, t.STATUS AS status,
       t.ROWS_WRITTEN AS rows_written, t.SOURCE_COUNT AS source_count,
       t.INSERT_COUNT AS insert_count, t.UPDATE_COUNT AS update_count,
       t.DELETE_COUNT AS delete_count, t.START_DATE AS start_date, t.END_DATE AS end_date
  FROM (SELECT l.PIPELINE_RUN_ID, ROW_NUMBER() OVER (PARTITION BY l.PIPELINE_ID
                                                       ORDER BY l.PIPELINE_RUN_ID DESC) AS shown
          FROM AUD_PIPELINES_RUN_LOG l
          JOIN CFG_PIPELINES p ON p.PIPELINE_ID = l.PIPELINE_ID
         WHERE p.PROJECT_ID = :project_id) r
  JOIN AUD_TASK_RUN_LOG t ON t.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID
 WHERE r.shown <= :per_pipeline
 ORDER BY t.TASK_ID, t.PIPELINE_RUN_ID DESC;

-- name: catalog_descriptions --
-- The descriptions of every task and business rule of a project, by kind and id.
SELECT 'TASK' AS kind, t.TASK_ID AS id, t.DESCRIPTION AS description
  FROM CFG_TASKS t
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID
 WHERE p.PROJECT_ID = :project_id AND t.DESCRIPTION IS NOT NULL
UNION ALL
SELECT 'RULE', r.BUSINESS_RULE_ID, r.DESCRIPTION
  FROM CFG_BUSINESS_RULES r
  JOIN CFG_TASKS t ON t.TASK_ID = r.TASK_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID
 WHERE p.PROJECT_ID = :project_id AND r.DESCRIPTION IS NOT NULL;
