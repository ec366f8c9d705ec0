-- name: lineage_traces --
-- The stored lineage trace of every task of a project, with the hashes it was made from.
SELECT l.TASK_ID AS task_id, l.SQL_HASH AS sql_hash, l.INPUT_HASH AS input_hash,
       l.TRACE AS trace
  FROM AUD_LINEAGE_TRACES l
  JOIN CFG_TASKS t ON t.TASK_ID = l.TASK_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID
 WHERE p.PROJECT_ID = :project_id;

-- name: record_lineage_trace --
-- Record (insert or replace) the lineage trace of one SQL task.
INSERT INTO AUD_LINEAGE_TRACES (TASK_ID, SQL_HASH, INPUT_HASH, TRACE, TRACED_AT, TRACED_BY)
VALUES (:task_id, :sql_hash, :input_hash, :trace, etl_craft_now(), :actor)
ON CONFLICT (TASK_ID) DO UPDATE
   SET SQL_HASH = excluded.SQL_HASH, INPUT_HASH = excluded.INPUT_HASH, TRACE = excluded.TRACE,
       TRACED_AT = excluded.TRACED_AT, TRACED_BY = excluded.TRACED_BY;
