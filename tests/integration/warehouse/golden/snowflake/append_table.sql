SELECT 1 FROM (SELECT attempt_id, task_run_id, action, target_object, source_count, target_count, insert_count, update_count, delete_count, duplicate_count, rows_written, new_key_count, changed_key_count, unchanged_key_count, stale_key_count, same_time_key_count, reopened_key_count, committed_at FROM etl_craft.attempt_ledger WHERE 1 = 0) p0, (SELECT task_run_id, attempt_id, fenced_at FROM etl_craft.task_run_fence WHERE 1 = 0) p1
;
CREATE TEMPORARY TABLE etl_stage AS SELECT * FROM (
SELECT id, code, amount FROM g.src WHERE 1 = 1
) etl_src WHERE 1 = 0
;
BEGIN
;
DESCRIBE TABLE etl_stage
;
SELECT * FROM etl_stage LIMIT 0
;
INSERT INTO etl_stage
SELECT etl_src.* FROM (
SELECT id, code, amount FROM g.src WHERE 1 = 1
) etl_src
;
SELECT COLUMN_NAME, DATA_TYPE FROM <database>.INFORMATION_SCHEMA.COLUMNS
WHERE TABLE_SCHEMA = UPPER(?) AND TABLE_NAME = UPPER(?)
ORDER BY ORDINAL_POSITION
;
DESCRIBE TABLE <database>.g.t
;
DELETE FROM g.t AS t WHERE t.TASK_RUN_ID = ?
;
SELECT COLUMN_NAME, DATA_TYPE FROM <database>.INFORMATION_SCHEMA.COLUMNS
WHERE TABLE_SCHEMA = UPPER(?) AND TABLE_NAME = UPPER(?)
ORDER BY ORDINAL_POSITION
;
DESCRIBE TABLE <database>.g.t
;
INSERT INTO g.t (ID, CODE, AMOUNT, HASH_KEY, CREATE_DATE, CREATED_BY, DELETE_FLAG, ACTIVE_FLAG, UPDATE_DATE, UPDATED_BY, PIPELINE_ID, PIPELINE_RUN_ID, TASK_RUN_ID)
SELECT d.ID, d.CODE, d.AMOUNT, MD5(CONCAT(CASE WHEN d.ID IS NULL THEN 'N' ELSE CONCAT('V', LENGTH(CAST(d.ID AS VARCHAR)), ':', CAST(d.ID AS VARCHAR)) END, CASE WHEN d.CODE IS NULL THEN 'N' ELSE CONCAT('V', LENGTH(CAST(d.CODE AS VARCHAR)), ':', CAST(d.CODE AS VARCHAR)) END, CASE WHEN d.AMOUNT IS NULL THEN 'N' ELSE CONCAT('V', LENGTH(CAST(CAST(d.AMOUNT AS numeric(12,2)) AS VARCHAR)), ':', CAST(CAST(d.AMOUNT AS numeric(12,2)) AS VARCHAR)) END)), CAST(? AS TIMESTAMP_TZ(6)), CAST(? AS VARCHAR), 'N', 'Y', CAST(? AS TIMESTAMP_TZ(6)), CAST(? AS VARCHAR), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0))
FROM etl_stage d
;
SELECT COUNT(*) FROM g.t
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
;
DROP TABLE IF EXISTS etl_stage
