-- name: metrics_clock --
-- The Engine DB's clock, against which the scrape measures ages.
SELECT etl_craft_now() AS now;

-- name: metrics_runs --
-- Live runs by project and status, and how many of them run past their pipeline's SLA; every project appears, even with none.
SELECT j.PROJECT_CODE AS project, r.STATUS AS status, COUNT(*) AS runs,
       SUM(CASE WHEN r.STATUS = 'IN-PROGRESS' AND p.SLA_MINUTES IS NOT NULL
                 AND etl_craft_add_seconds(r.START_DATE, p.SLA_MINUTES * 60) < etl_craft_now()
                THEN 1 ELSE 0 END) AS over_sla
  FROM AUD_PIPELINES_RUN_LOG r
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE r.STATUS IN ('QUEUED', 'IN-PROGRESS')
 GROUP BY j.PROJECT_CODE, r.STATUS
UNION ALL
SELECT PROJECT_CODE, NULL, 0, 0 FROM CFG_PROJECTS;

-- name: metrics_attempts --
-- Live attempts by pool, slot kind and status: how many, how many are retries, and when the oldest due QUEUED one became due; every pool appears.
SELECT POOL AS pool, SLOT_KIND AS slot_kind, STATUS AS status, COUNT(*) AS attempts,
       SUM(CASE WHEN ATTEMPT_NUMBER > 1 THEN 1 ELSE 0 END) AS retries,
       SUM(CASE WHEN STATUS = 'QUEUED' AND (NOT_BEFORE IS NULL OR NOT_BEFORE <= etl_craft_now())
                THEN 1 ELSE 0 END) AS due,
       MIN(CASE WHEN STATUS = 'QUEUED' AND (NOT_BEFORE IS NULL OR NOT_BEFORE <= etl_craft_now())
                THEN COALESCE(NOT_BEFORE, QUEUED_AT) END) AS oldest_due
  FROM AUD_TASK_ATTEMPTS
 WHERE STATUS IN ('QUEUED', 'CLAIMED', 'RUNNING')
 GROUP BY POOL, SLOT_KIND, STATUS
UNION ALL
SELECT POOL_NAME, NULL, NULL, 0, 0, 0, NULL FROM CFG_POOLS;

-- name: metrics_gate_waits --
-- Open gate waits by level (a pipeline gate or a task's), with when the oldest began.
SELECT CASE WHEN TASK_ID IS NULL THEN 'pipeline' ELSE 'task' END AS level, COUNT(*) AS waits,
       MIN(FIRST_CHECK_AT) AS oldest
  FROM AUD_GATE_WAITS
 WHERE RESOLVED_AT IS NULL
 GROUP BY CASE WHEN TASK_ID IS NULL THEN 'pipeline' ELSE 'task' END;

-- name: metrics_workers --
-- Workers that are not gone, by pool and status, with their slots of each kind.
SELECT POOL AS pool, STATUS AS status, COUNT(*) AS workers,
       SUM(INGESTION_SLOTS) AS ingestion_slots, SUM(WAREHOUSE_SLOTS) AS warehouse_slots
  FROM AUD_WORKERS
 WHERE STATUS <> 'GONE'
 GROUP BY POOL, STATUS;
