-- name: read_task_offset --
-- The stored offset of one ingestion task, if any.
SELECT OFFSET_TYPE AS offset_type, OFFSET_VALUE AS offset_value, ATTEMPT_ID AS attempt_id,
       UPDATED_AT AS updated_at
  FROM AUD_TASK_OFFSETS
 WHERE TASK_ID = :task_id;

-- name: store_task_offset --
-- Store (insert or replace) the offset a successful attempt of the task returned.
INSERT INTO AUD_TASK_OFFSETS (TASK_ID, OFFSET_TYPE, OFFSET_VALUE, ATTEMPT_ID, UPDATED_AT)
VALUES (:task_id, :offset_type, :offset_value, :attempt_id, etl_craft_now())
ON CONFLICT (TASK_ID) DO UPDATE
   SET OFFSET_TYPE = excluded.OFFSET_TYPE, OFFSET_VALUE = excluded.OFFSET_VALUE,
       ATTEMPT_ID = excluded.ATTEMPT_ID, UPDATED_AT = excluded.UPDATED_AT;
