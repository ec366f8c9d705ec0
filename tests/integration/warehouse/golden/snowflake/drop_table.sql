SELECT 1 FROM (SELECT attempt_id, task_run_id, action, target_object, source_count, target_count, insert_count, update_count, delete_count, duplicate_count, rows_written, new_key_count, changed_key_count, unchanged_key_count, stale_key_count, same_time_key_count, reopened_key_count, committed_at FROM etl_craft.attempt_ledger WHERE 1 = 0) p0, (SELECT task_run_id, attempt_id, fenced_at FROM etl_craft.task_run_fence WHERE 1 = 0) p1
;
BEGIN
;
SELECT COLUMN_NAME, DATA_TYPE FROM <database>.INFORMATION_SCHEMA.COLUMNS
WHERE TABLE_SCHEMA = UPPER(?) AND TABLE_NAME = UPPER(?)
ORDER BY ORDINAL_POSITION
;
DESCRIBE TABLE <database>.g.t
;
SELECT COUNT(*) FROM g.t
;
COMMIT
;
DROP TABLE IF EXISTS g.t
;
BEGIN
;
UPDATE etl_craft.task_run_fence SET attempt_id = CAST(? AS NUMBER(38,0)), fenced_at = CAST(? AS TIMESTAMP_TZ(6))
WHERE task_run_id = ? AND attempt_id <= CAST(? AS NUMBER(38,0))
;
INSERT INTO etl_craft.task_run_fence (task_run_id, attempt_id, fenced_at)
SELECT CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS TIMESTAMP_TZ(6))
WHERE NOT EXISTS (SELECT 1 FROM etl_craft.task_run_fence WHERE task_run_id = ?)
;
SELECT attempt_id FROM etl_craft.task_run_fence WHERE task_run_id = ?
;
INSERT INTO etl_craft.attempt_ledger (attempt_id, task_run_id, action, target_object, source_count, target_count, insert_count, update_count, delete_count, duplicate_count, rows_written, new_key_count, changed_key_count, unchanged_key_count, stale_key_count, same_time_key_count, reopened_key_count, committed_at)
VALUES (CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS VARCHAR), CAST(? AS VARCHAR), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS TIMESTAMP_TZ(6)))
;
COMMIT
