-- name: overview_project_runs --
-- A project's runs that are live, or ended since a time: how many run (a task of theirs is claimed or running), wait (in progress, nothing held, or queued), failed, missed their SLA (ended MISSED, or running past it), and when the oldest queued run was queued.
SELECT SUM(CASE WHEN r.STATUS = 'IN-PROGRESS' AND EXISTS (
                SELECT 1 FROM AUD_TASK_RUN_LOG t
                  JOIN AUD_TASK_ATTEMPTS a ON a.TASK_RUN_ID = t.TASK_RUN_ID
                 WHERE t.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID AND a.STATUS IN ('CLAIMED', 'RUNNING'))
                THEN 1 ELSE 0 END) AS executing,
       SUM(CASE WHEN r.STATUS = 'IN-PROGRESS' THEN 1 ELSE 0 END) AS running,
       SUM(CASE WHEN r.STATUS = 'QUEUED' THEN 1 ELSE 0 END) AS queued,
       SUM(CASE WHEN r.STATUS = 'FAILED' AND r.END_DATE >= :since THEN 1 ELSE 0 END) AS failed,
       SUM(CASE WHEN r.SLA_STATUS = 'MISSED' AND r.END_DATE >= :since THEN 1 ELSE 0 END) AS sla_missed,
       SUM(CASE WHEN r.STATUS = 'IN-PROGRESS' AND p.SLA_MINUTES IS NOT NULL
                 AND etl_craft_add_seconds(r.START_DATE, p.SLA_MINUTES * 60) < etl_craft_now()
                THEN 1 ELSE 0 END) AS over_sla,
       MIN(CASE WHEN r.STATUS = 'QUEUED' THEN r.QUEUED_AT END) AS oldest_queued
  FROM AUD_PIPELINES_RUN_LOG r
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
 WHERE p.PROJECT_ID = :project_id
   AND (r.STATUS IN ('QUEUED', 'IN-PROGRESS') OR r.END_DATE >= :since);

-- name: overview_project_attempts --
-- A project's live attempts: how many are due in a queue, wait for a retry delay, or are held by an owner, and when the oldest due one became due.
SELECT SUM(CASE WHEN a.STATUS = 'QUEUED' AND (a.NOT_BEFORE IS NULL OR a.NOT_BEFORE <= etl_craft_now())
                THEN 1 ELSE 0 END) AS due,
       SUM(CASE WHEN a.STATUS = 'QUEUED' AND a.NOT_BEFORE > etl_craft_now() THEN 1 ELSE 0 END) AS delayed,
       SUM(CASE WHEN a.STATUS IN ('CLAIMED', 'RUNNING') THEN 1 ELSE 0 END) AS held,
       MIN(CASE WHEN a.STATUS = 'QUEUED' AND (a.NOT_BEFORE IS NULL OR a.NOT_BEFORE <= etl_craft_now())
                THEN COALESCE(a.NOT_BEFORE, a.QUEUED_AT) END) AS oldest_due
  FROM AUD_TASK_ATTEMPTS a
  JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = t.PIPELINE_RUN_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
 WHERE p.PROJECT_ID = :project_id AND a.STATUS IN ('QUEUED', 'CLAIMED', 'RUNNING');

-- name: overview_workers --
-- Every worker agent, those not GONE first, with how many attempts each holds now.
SELECT w.WORKER_ID AS worker_id, w.POOL AS pool, w.HOST AS host, w.PID AS pid,
       w.VERSION AS version, w.STATUS AS status, w.INGESTION_SLOTS AS ingestion_slots,
       w.WAREHOUSE_SLOTS AS warehouse_slots, w.STARTED_AT AS started_at,
       w.HEARTBEAT_AT AS heartbeat_at, w.STOPPED_AT AS stopped_at,
       (SELECT COUNT(*) FROM AUD_TASK_ATTEMPTS a
         WHERE a.OWNER_ID = w.WORKER_ID AND a.STATUS IN ('CLAIMED', 'RUNNING')) AS attempts
  FROM AUD_WORKERS w
 ORDER BY CASE WHEN w.STATUS = 'GONE' THEN 1 ELSE 0 END, w.HEARTBEAT_AT DESC, w.WORKER_ID
 LIMIT :limit;

-- name: overview_interventions --
-- The newest interventions of a project (or of one pipeline): run and task changes, pauses and resumes, newest first.
SELECT * FROM (
SELECT i.REQUESTED_AT AS at, i.REQUESTED_BY AS actor, i.REQUESTED_BY_KIND AS actor_kind,
       i.KIND AS kind, p.PIPELINE_CODE AS pipeline_code, i.PIPELINE_RUN_ID AS run_id,
       k.TASK_CODE AS task_code, i.FROM_STATUS AS from_status, i.TO_STATUS AS to_status,
       i.ROWS_WRITTEN AS rows_written, i.REASON AS reason, i.INTERVENTION_ID AS entry_id
  FROM AUD_RUN_INTERVENTIONS i
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = i.PIPELINE_RUN_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
  LEFT JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = i.TASK_RUN_ID
  LEFT JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID
 WHERE p.PROJECT_ID = :project_id
   AND (CAST(:pipeline_id AS BIGINT) IS NULL OR p.PIPELINE_ID = :pipeline_id)
UNION ALL
SELECT s.PAUSED_AT, s.PAUSED_BY, s.PAUSED_BY_KIND, 'PAUSE', p.PIPELINE_CODE, NULL, NULL,
       NULL, NULL, NULL, s.REASON, s.PAUSE_ID
  FROM AUD_PIPELINE_PAUSES s
  LEFT JOIN CFG_PIPELINES p ON p.PIPELINE_ID = s.PIPELINE_ID
 WHERE s.PROJECT_ID = :project_id
   AND (CAST(:pipeline_id AS BIGINT) IS NULL OR s.PIPELINE_ID IS NULL OR s.PIPELINE_ID = :pipeline_id)
UNION ALL
SELECT s.RESUMED_AT, s.RESUMED_BY, s.RESUMED_BY_KIND, 'RESUME', p.PIPELINE_CODE, NULL, NULL,
       NULL, NULL, NULL, NULL, s.PAUSE_ID
  FROM AUD_PIPELINE_PAUSES s
  LEFT JOIN CFG_PIPELINES p ON p.PIPELINE_ID = s.PIPELINE_ID
 WHERE s.PROJECT_ID = :project_id AND s.RESUMED_AT IS NOT NULL
   AND (CAST(:pipeline_id AS BIGINT) IS NULL OR s.PIPELINE_ID IS NULL OR s.PIPELINE_ID = :pipeline_id)
) entries
 ORDER BY at DESC, entry_id DESC
 LIMIT :limit;

-- name: overview_leader --
-- The overseer that holds the current leadership epoch, when it has not stopped and beat within the last :fresh_seconds.
SELECT o.OVERSEER_ID AS overseer_id, o.HOST AS host, o.PID AS pid, o.HEARTBEAT_AT AS heartbeat_at
  FROM AUD_LEADERSHIP l
  JOIN AUD_OVERSEERS o ON o.OVERSEER_ID = l.OVERSEER_ID
 WHERE l.LEADER_ROLE = 'overseer' AND o.STOPPED_AT IS NULL
   AND etl_craft_add_seconds(o.HEARTBEAT_AT, :fresh_seconds) >= etl_craft_now();

-- name: overview_last_overseer_beat --
-- The last heartbeat any overseer wrote; NULL before any ran.
SELECT MAX(HEARTBEAT_AT) AS heartbeat_at FROM AUD_OVERSEERS;

-- name: overview_waiting_pools --
-- Pools with due QUEUED attempts: how many, how many workers the pool ever had, how many are ACTIVE and beat within the last :fresh_seconds, and the pool's last worker heartbeat.
SELECT a.POOL AS pool, COUNT(*) AS due,
       (SELECT COUNT(*) FROM AUD_WORKERS w WHERE w.POOL = a.POOL) AS workers,
       (SELECT COUNT(*) FROM AUD_WORKERS w
         WHERE w.POOL = a.POOL AND w.STATUS = 'ACTIVE'
           AND etl_craft_add_seconds(w.HEARTBEAT_AT, :fresh_seconds) >= etl_craft_now()) AS live,
       (SELECT MAX(w.HEARTBEAT_AT) FROM AUD_WORKERS w WHERE w.POOL = a.POOL) AS last_heartbeat
  FROM AUD_TASK_ATTEMPTS a
 WHERE a.STATUS = 'QUEUED' AND (a.NOT_BEFORE IS NULL OR a.NOT_BEFORE <= etl_craft_now())
 GROUP BY a.POOL
 ORDER BY a.POOL;
