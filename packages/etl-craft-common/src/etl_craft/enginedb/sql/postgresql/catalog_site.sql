-- name: catalog_shown_runs --
-- The newest :per_pipeline runs of every pipeline of a project, each read by index (LATERAL).
SELECT p.PIPELINE_ID AS pipeline_id, r.PIPELINE_RUN_ID AS pipeline_run_id, r.RUN_KEY AS run_key,
       r.TRIGGER_KIND AS trigger_kind, r.RUN_DATE AS run_date, r.STATUS AS status,
       r.START_DATE AS start_date, r.END_DATE AS end_date
  FROM CFG_PIPELINES p
  CROSS JOIN LATERAL (SELECT l.PIPELINE_RUN_ID, l.RUN_KEY, l.TRIGGER_KIND, l.RUN_DATE, l.STATUS,
                             l.START_DATE, l.END_DATE
                        FROM AUD_PIPELINES_RUN_LOG l
                       WHERE l.PIPELINE_ID = p.PIPELINE_ID
                       ORDER BY l.PIPELINE_RUN_ID DESC
                       LIMIT :per_pipeline) r
 WHERE p.PROJECT_ID = :project_id
 ORDER BY p.PIPELINE_ID, r.PIPELINE_RUN_ID DESC;

-- name: catalog_shown_task_runs --
-- The task runs of the runs catalog_shown_runs returns, with their row counts.
SELECT t.PIPELINE_RUN_ID AS pipeline_run_id, t.TASK_ID AS task_id, t.STATUS AS status,
       t.ROWS_WRITTEN AS rows_written, t.SOURCE_COUNT AS source_count,
       t.INSERT_COUNT AS insert_count, t.UPDATE_COUNT AS update_count,
       t.DELETE_COUNT AS delete_count, t.START_DATE AS start_date, t.END_DATE AS end_date
  FROM CFG_PIPELINES p
  CROSS JOIN LATERAL (SELECT l.PIPELINE_RUN_ID
                        FROM AUD_PIPELINES_RUN_LOG l
                       WHERE l.PIPELINE_ID = p.PIPELINE_ID
                       ORDER BY l.PIPELINE_RUN_ID DESC
                       LIMIT :per_pipeline) r
  JOIN AUD_TASK_RUN_LOG t ON t.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID
 WHERE p.PROJECT_ID = :project_id
 ORDER BY t.TASK_ID, t.PIPELINE_RUN_ID DESC;
