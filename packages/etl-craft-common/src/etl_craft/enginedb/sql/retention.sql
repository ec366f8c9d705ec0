-- name: purge_expired_runs --
-- Up to :batch runs ended before :run_cutoff after the cursor, oldest first, that no retained run's consumption or gate decision references and whose interventions expired too.
SELECT r.PIPELINE_RUN_ID AS id, r.END_DATE AS ended
  FROM AUD_PIPELINES_RUN_LOG r
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
 WHERE r.STATUS IN ('SUCCESS', 'FAILED', 'SKIPPED', 'CANCELLED')
   AND r.END_DATE < :run_cutoff
   AND (r.END_DATE > :after_end OR (r.END_DATE = :after_end AND r.PIPELINE_RUN_ID > :after_id))
   AND (CAST(:project_id AS BIGINT) IS NULL OR p.PROJECT_ID = :project_id)
   AND NOT EXISTS (SELECT 1 FROM AUD_RUN_INTERVENTIONS i
                    WHERE i.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID
                      AND i.REQUESTED_AT >= :intervention_cutoff)
   AND NOT EXISTS (SELECT 1 FROM AUD_DEPENDENCY_CONSUMPTION c
                     JOIN AUD_PIPELINES_RUN_LOG k ON k.PIPELINE_RUN_ID = c.PIPELINE_RUN_ID
                    WHERE c.CONSUMED_PIPELINE_RUN_ID = r.PIPELINE_RUN_ID
                      AND k.PIPELINE_RUN_ID <> r.PIPELINE_RUN_ID
                      AND (k.STATUS NOT IN ('SUCCESS', 'FAILED', 'SKIPPED', 'CANCELLED')
                           OR k.END_DATE >= :run_cutoff
                           OR EXISTS (SELECT 1 FROM AUD_RUN_INTERVENTIONS i
                                       WHERE i.PIPELINE_RUN_ID = k.PIPELINE_RUN_ID
                                         AND i.REQUESTED_AT >= :intervention_cutoff)))
   AND NOT EXISTS (SELECT 1 FROM AUD_GATE_DECISIONS g
                     JOIN AUD_PIPELINES_RUN_LOG k ON k.PIPELINE_RUN_ID = g.PIPELINE_RUN_ID
                    WHERE g.SELECTED_PIPELINE_RUN_ID = r.PIPELINE_RUN_ID
                      AND k.PIPELINE_RUN_ID <> r.PIPELINE_RUN_ID
                      AND (k.STATUS NOT IN ('SUCCESS', 'FAILED', 'SKIPPED', 'CANCELLED')
                           OR k.END_DATE >= :run_cutoff
                           OR EXISTS (SELECT 1 FROM AUD_RUN_INTERVENTIONS i
                                       WHERE i.PIPELINE_RUN_ID = k.PIPELINE_RUN_ID
                                         AND i.REQUESTED_AT >= :intervention_cutoff)))
 ORDER BY r.END_DATE, r.PIPELINE_RUN_ID
 LIMIT :batch;

-- name: lock_purged_runs --
-- The runs of one purge batch that are still ended, locked until the purge commits so that none is reopened meanwhile.
SELECT PIPELINE_RUN_ID AS id
  FROM AUD_PIPELINES_RUN_LOG
 WHERE PIPELINE_RUN_ID IN :run_id_list
   AND STATUS IN ('SUCCESS', 'FAILED', 'SKIPPED', 'CANCELLED')
 ORDER BY PIPELINE_RUN_ID
   FOR UPDATE;

-- name: purge_expired_consumption_ids --
-- Up to :batch consumption records older than :consumption_cutoff, oldest first (consumption_days).
SELECT c.CONSUMPTION_ID AS id
  FROM AUD_DEPENDENCY_CONSUMPTION c
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = c.PIPELINE_RUN_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
 WHERE c.CONSUMED_AT < :consumption_cutoff
   AND (CAST(:project_id AS BIGINT) IS NULL OR p.PROJECT_ID = :project_id)
 ORDER BY c.CONSUMPTION_ID
 LIMIT :batch;

-- name: purge_consumption_ids --
-- Up to :batch consumption records of the purged runs, oldest first, each with its run.
SELECT CONSUMPTION_ID AS id, PIPELINE_RUN_ID AS run_id FROM AUD_DEPENDENCY_CONSUMPTION
 WHERE PIPELINE_RUN_ID IN :run_id_list
 ORDER BY CONSUMPTION_ID
 LIMIT :batch;

-- name: purge_consumption --
-- Delete consumption records by id, returning them (a purge: the history guard asks for its action).
DELETE FROM AUD_DEPENDENCY_CONSUMPTION WHERE CONSUMPTION_ID IN :id_list RETURNING *;

-- name: purge_interventions_ids --
-- Up to :batch interventions on the purged runs, oldest first.
SELECT INTERVENTION_ID AS id, PIPELINE_RUN_ID AS run_id FROM AUD_RUN_INTERVENTIONS
 WHERE PIPELINE_RUN_ID IN :run_id_list
 ORDER BY INTERVENTION_ID
 LIMIT :batch;

-- name: purge_interventions --
-- Delete interventions by id, returning them (a purge: the history guard asks for its action).
DELETE FROM AUD_RUN_INTERVENTIONS WHERE INTERVENTION_ID IN :id_list RETURNING *;

-- name: purge_gate_decisions_ids --
-- Up to :batch gate decisions of the purged runs that no consumption record still references, oldest first.
SELECT g.DECISION_ID AS id, g.PIPELINE_RUN_ID AS run_id FROM AUD_GATE_DECISIONS g
 WHERE g.PIPELINE_RUN_ID IN :run_id_list
   AND NOT EXISTS (SELECT 1 FROM AUD_DEPENDENCY_CONSUMPTION c WHERE c.DECISION_ID = g.DECISION_ID)
 ORDER BY g.DECISION_ID
 LIMIT :batch;

-- name: purge_gate_decisions --
-- Delete gate decisions by id, returning them (a purge: the history guard asks for its action).
DELETE FROM AUD_GATE_DECISIONS WHERE DECISION_ID IN :id_list RETURNING *;

-- name: purge_gate_waits_ids --
-- Up to :batch gate waits of the purged runs, oldest first.
SELECT GATE_WAIT_ID AS id, PIPELINE_RUN_ID AS run_id FROM AUD_GATE_WAITS
 WHERE PIPELINE_RUN_ID IN :run_id_list
 ORDER BY GATE_WAIT_ID
 LIMIT :batch;

-- name: purge_gate_waits --
-- Delete gate waits by id, returning them.
DELETE FROM AUD_GATE_WAITS WHERE GATE_WAIT_ID IN :id_list RETURNING *;

-- name: purge_downstream_reruns_ids --
-- Up to :batch downstream rerun requests of the purged runs, oldest first.
SELECT RERUN_ID AS id, PIPELINE_RUN_ID AS run_id FROM AUD_DOWNSTREAM_RERUNS
 WHERE PIPELINE_RUN_ID IN :run_id_list
 ORDER BY RERUN_ID
 LIMIT :batch;

-- name: purge_downstream_reruns --
-- Delete downstream rerun requests by id, returning them.
DELETE FROM AUD_DOWNSTREAM_RERUNS WHERE RERUN_ID IN :id_list RETURNING *;

-- name: purge_attempts_ids --
-- Up to :batch ended attempts of the purged runs that no gate decision or stored offset references, oldest first.
SELECT a.ATTEMPT_ID AS id, t.PIPELINE_RUN_ID AS run_id
  FROM AUD_TASK_ATTEMPTS a
  JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
 WHERE t.PIPELINE_RUN_ID IN :run_id_list
   AND a.STATUS NOT IN ('QUEUED', 'CLAIMED', 'RUNNING')
   AND NOT EXISTS (SELECT 1 FROM AUD_GATE_DECISIONS g WHERE g.ATTEMPT_ID = a.ATTEMPT_ID)
   AND NOT EXISTS (SELECT 1 FROM AUD_TASK_OFFSETS o WHERE o.ATTEMPT_ID = a.ATTEMPT_ID)
 ORDER BY a.ATTEMPT_ID
 LIMIT :batch;

-- name: purge_attempts --
-- Delete attempts by id, returning them with their log's location (a purge: the history guard asks for its action).
DELETE FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID IN :id_list RETURNING *;

-- name: purge_task_runs_ids --
-- Up to :batch task runs of the purged runs with no attempt or intervention left, oldest first.
SELECT t.TASK_RUN_ID AS id, t.PIPELINE_RUN_ID AS run_id FROM AUD_TASK_RUN_LOG t
 WHERE t.PIPELINE_RUN_ID IN :run_id_list
   AND NOT EXISTS (SELECT 1 FROM AUD_TASK_ATTEMPTS a WHERE a.TASK_RUN_ID = t.TASK_RUN_ID)
   AND NOT EXISTS (SELECT 1 FROM AUD_RUN_INTERVENTIONS i WHERE i.TASK_RUN_ID = t.TASK_RUN_ID)
 ORDER BY t.TASK_RUN_ID
 LIMIT :batch;

-- name: purge_task_runs --
-- Delete task runs by id, returning them.
DELETE FROM AUD_TASK_RUN_LOG WHERE TASK_RUN_ID IN :id_list RETURNING *;

-- name: purge_runs_ids --
-- Up to :batch of the purged runs that nothing references any more, oldest first.
SELECT r.PIPELINE_RUN_ID AS id, r.PIPELINE_RUN_ID AS run_id FROM AUD_PIPELINES_RUN_LOG r
 WHERE r.PIPELINE_RUN_ID IN :run_id_list
   AND NOT EXISTS (SELECT 1 FROM AUD_TASK_RUN_LOG t WHERE t.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID)
   AND NOT EXISTS (SELECT 1 FROM AUD_GATE_DECISIONS g WHERE g.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID)
   AND NOT EXISTS (SELECT 1 FROM AUD_GATE_WAITS w WHERE w.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID)
   AND NOT EXISTS (SELECT 1 FROM AUD_RUN_INTERVENTIONS i WHERE i.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID)
   AND NOT EXISTS (SELECT 1 FROM AUD_DOWNSTREAM_RERUNS d WHERE d.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID)
   AND NOT EXISTS (SELECT 1 FROM AUD_DEPENDENCY_CONSUMPTION c
                    WHERE c.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID
                       OR c.CONSUMED_PIPELINE_RUN_ID = r.PIPELINE_RUN_ID)
 ORDER BY r.PIPELINE_RUN_ID
 LIMIT :batch;

-- name: purge_runs --
-- Delete runs by id, returning them.
DELETE FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID IN :id_list RETURNING *;

