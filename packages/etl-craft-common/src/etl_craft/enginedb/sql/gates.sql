-- name: gate_upstream_run --
-- The newest non-backfill run of an upstream pipeline, with its outcome and rows written.
SELECT r.PIPELINE_RUN_ID AS pipeline_run_id, r.STATUS AS status, r.OUTPUT_REVISION AS revision,
       r.RUN_KEY AS run_key,
       (SELECT coalesce(sum(t.ROWS_WRITTEN), 0) FROM AUD_TASK_RUN_LOG t
         WHERE t.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID) AS rows_written
  FROM AUD_PIPELINES_RUN_LOG r
 WHERE r.PIPELINE_ID = :pipeline_id AND r.TRIGGER_KIND <> 'BACKFILL'
 ORDER BY r.PIPELINE_RUN_ID DESC
 LIMIT 1;

-- name: gate_upstream_task_run --
-- The task run of an upstream task in one upstream run.
SELECT TASK_RUN_ID AS task_run_id, STATUS AS status, ROWS_WRITTEN AS rows_written
  FROM AUD_TASK_RUN_LOG WHERE PIPELINE_RUN_ID = :pipeline_run_id AND TASK_ID = :task_id;

-- name: gate_last_consumption --
-- The newest upstream run (and revision) a dependency has already consumed.
SELECT CONSUMED_PIPELINE_RUN_ID AS pipeline_run_id, CONSUMED_REVISION AS revision
  FROM AUD_DEPENDENCY_CONSUMPTION
 WHERE (TASK_DEPENDENCY_ID = :task_dependency_id OR PIPELINE_DEPENDENCY_ID = :pipeline_dependency_id)
 ORDER BY CONSUMPTION_ID DESC
 LIMIT 1;

-- name: gate_open_wait --
-- The open wait of a run's task gate (TASK_ID 0 stands for the pipeline gate).
SELECT GATE_WAIT_ID AS gate_wait_id, FIRST_CHECK_AT AS first_check_at,
       NEXT_CHECK_AT AS next_check_at, LOOKS AS looks, WAIT_UNTIL AS wait_until
  FROM AUD_GATE_WAITS
 WHERE PIPELINE_RUN_ID = :pipeline_run_id AND coalesce(TASK_ID, 0) = :task_id
   AND RESOLVED_AT IS NULL;

-- name: gate_start_wait --
-- Start waiting: the gate looks again at NEXT_CHECK_AT and gives up at WAIT_UNTIL.
INSERT INTO AUD_GATE_WAITS
    (PIPELINE_RUN_ID, TASK_ID, FIRST_CHECK_AT, NEXT_CHECK_AT, LOOKS, WAIT_UNTIL, LAST_REASON)
VALUES (:pipeline_run_id, :task_id, etl_craft_now(),
        etl_craft_add_seconds(etl_craft_now(), :next_in_seconds), 1,
        etl_craft_add_seconds(etl_craft_now(), :wait_seconds), :reason);

-- name: gate_look_again --
-- Record another look of an open wait and when the next one is due.
UPDATE AUD_GATE_WAITS
   SET LOOKS = LOOKS + 1, NEXT_CHECK_AT = etl_craft_add_seconds(etl_craft_now(), :next_in_seconds),
       LAST_REASON = :reason
 WHERE GATE_WAIT_ID = :gate_wait_id AND RESOLVED_AT IS NULL;

-- name: gate_resolve_wait --
-- Close a wait once its gate decided.
UPDATE AUD_GATE_WAITS SET RESOLVED_AT = etl_craft_now(), LAST_REASON = :reason
 WHERE PIPELINE_RUN_ID = :pipeline_run_id AND coalesce(TASK_ID, 0) = :task_id
   AND RESOLVED_AT IS NULL;

-- name: gate_record_decision --
-- Record one judged dependency, in the transaction that admits (or skips) what it gates.
INSERT INTO AUD_GATE_DECISIONS
    (PIPELINE_RUN_ID, TASK_ID, PIPELINE_DEPENDENCY_ID, TASK_DEPENDENCY_ID, SELECTED_PIPELINE_RUN_ID,
     SELECTED_TASK_RUN_ID, SELECTED_REVISION, RESULT, REASON, DECIDED_AT, DECIDED_BY,
     DECIDED_BY_KIND)
VALUES (:pipeline_run_id, :task_id, :pipeline_dependency_id, :task_dependency_id,
        :selected_run_id, :selected_task_run_id, :selected_revision, :result, :reason,
        etl_craft_now(), :actor, :actor_kind);

-- name: gate_consume_decisions --
-- At finalize: what the run consumed, taken from its SATISFIED decisions (never re-judged).
INSERT INTO AUD_DEPENDENCY_CONSUMPTION
    (PIPELINE_RUN_ID, PIPELINE_DEPENDENCY_ID, TASK_DEPENDENCY_ID, DECISION_ID,
     CONSUMED_PIPELINE_RUN_ID, CONSUMED_TASK_RUN_ID, CONSUMED_REVISION, CONSUMED_AT)
SELECT d.PIPELINE_RUN_ID, d.PIPELINE_DEPENDENCY_ID, d.TASK_DEPENDENCY_ID, d.DECISION_ID,
       d.SELECTED_PIPELINE_RUN_ID, d.SELECTED_TASK_RUN_ID, coalesce(d.SELECTED_REVISION, 1),
       etl_craft_now()
  FROM AUD_GATE_DECISIONS d
 WHERE d.PIPELINE_RUN_ID = :pipeline_run_id AND d.RESULT = 'SATISFIED'
   AND d.SELECTED_PIPELINE_RUN_ID IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM AUD_DEPENDENCY_CONSUMPTION c WHERE c.DECISION_ID = d.DECISION_ID);

-- name: pipeline_dependencies_of --
-- The active pipeline dependencies of one pipeline.
SELECT d.PIPELINE_DEPENDENCY_ID AS pipeline_dependency_id, d.DEPENDS_ON_PIPELINE_ID AS upstream_id,
       d.DEPENDENCY_TYPE AS dependency_type, d.CONSUME_REPAIRS AS consume_repairs,
       p.PIPELINE_CODE AS upstream_code
  FROM CFG_PIPELINE_DEPENDENCY d JOIN CFG_PIPELINES p ON p.PIPELINE_ID = d.DEPENDS_ON_PIPELINE_ID
 WHERE d.PIPELINE_ID = :pipeline_id AND d.ACTIVE_FLAG = 'Y'
 ORDER BY d.PIPELINE_DEPENDENCY_ID;
