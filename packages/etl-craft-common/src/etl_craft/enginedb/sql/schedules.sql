-- name: scheduled_pipelines --
-- Active scheduled pipelines of active projects, with their schedule settings and latest tick's run key.
SELECT p.PIPELINE_ID AS pipeline_id, p.PIPELINE_CODE AS pipeline_code,
       j.PROJECT_CODE AS project_code, p.RUN_SCHEDULE AS run_schedule,
       p.SCHEDULE_TIMEZONE AS schedule_timezone, j.TIMEZONE AS project_timezone,
       p.SCHEDULE_START_DATE AS start_date, p.CATCHUP AS catchup,
       p.MAX_CATCHUP_RUNS AS max_catchup_runs, p.OVERLAP_POLICY AS overlap_policy,
       p.PRIORITY AS priority, p.CREATE_DATE AS created_at,
       (SELECT max(r.RUN_KEY) FROM AUD_PIPELINES_RUN_LOG r
         WHERE r.PIPELINE_ID = p.PIPELINE_ID AND r.TRIGGER_KIND = 'SCHEDULE'
           AND r.RUN_KEY LIKE 'schedule:%') AS latest_run_key
  FROM CFG_PIPELINES p JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE p.ACTIVE_FLAG = 'Y' AND j.ACTIVE_FLAG = 'Y' AND p.RUN_SCHEDULE IS NOT NULL
 ORDER BY p.PIPELINE_ID;

-- name: latest_schedule_run_key --
-- The run key of one pipeline's latest schedule tick; keys of one format sort as their ticks do.
SELECT max(RUN_KEY) AS run_key
  FROM AUD_PIPELINES_RUN_LOG
 WHERE PIPELINE_ID = :pipeline_id AND TRIGGER_KIND = 'SCHEDULE' AND RUN_KEY LIKE 'schedule:%';
