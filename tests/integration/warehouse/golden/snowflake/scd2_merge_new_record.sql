SELECT 1 FROM (SELECT attempt_id, task_run_id, action, target_object, source_count, target_count, insert_count, update_count, delete_count, duplicate_count, rows_written, new_key_count, changed_key_count, unchanged_key_count, stale_key_count, same_time_key_count, reopened_key_count, committed_at FROM etl_craft.attempt_ledger WHERE 1 = 0) p0, (SELECT task_run_id, attempt_id, fenced_at FROM etl_craft.task_run_fence WHERE 1 = 0) p1
;
CREATE TEMPORARY TABLE etl_stage AS SELECT * FROM (
SELECT id, code, amount FROM g.src WHERE 1 = 1 AND id = 2
) etl_src WHERE 1 = 0
;
BEGIN
;
DESCRIBE TABLE etl_stage
;
SELECT * FROM etl_stage LIMIT 0
;
SELECT COLUMN_NAME, DATA_TYPE FROM <database>.INFORMATION_SCHEMA.COLUMNS
WHERE TABLE_SCHEMA = UPPER(?) AND TABLE_NAME = UPPER(?)
ORDER BY ORDINAL_POSITION
;
DESCRIBE TABLE <database>.g.t
;
COMMIT
;
ALTER TABLE etl_stage ADD COLUMN etl_craft_hash VARCHAR(32)
;
ALTER TABLE etl_stage ADD COLUMN etl_craft_valid_from TIMESTAMP_TZ(6)
;
BEGIN
;
INSERT INTO etl_stage
SELECT etl_src.*, MD5(CONCAT(CASE WHEN etl_src.CODE IS NULL THEN 'N' ELSE CONCAT('V', LENGTH(CAST(etl_src.CODE AS VARCHAR)), ':', CAST(etl_src.CODE AS VARCHAR)) END, CASE WHEN etl_src.AMOUNT IS NULL THEN 'N' ELSE CONCAT('V', LENGTH(CAST(CAST(etl_src.AMOUNT AS numeric(12,2)) AS VARCHAR)), ':', CAST(CAST(etl_src.AMOUNT AS numeric(12,2)) AS VARCHAR)) END)), CAST('<instant>' AS TIMESTAMPTZ) FROM (
SELECT id, code, amount FROM g.src WHERE 1 = 1 AND id = 2
) etl_src
;
SELECT COUNT(*), COALESCE(SUM(CASE WHEN id IS NULL THEN etl_craft_copies ELSE 0 END), 0),
  COALESCE(MAX(etl_craft_copies), 0)
FROM (SELECT id, COUNT(*) AS etl_craft_copies FROM etl_stage GROUP BY id) k
;
SELECT MAX(t.VALID_FROM), MAX(t.VALID_TO), COUNT(*), COALESCE(SUM(CASE WHEN t.ACTIVE_FLAG = 'Y' AND t.DELETE_FLAG = 'Y' THEN 1 END), 0) FROM g.t t
;
COMMIT
;
CREATE TEMPORARY TABLE etl_delta AS
SELECT * FROM etl_stage d WHERE NOT EXISTS (
  SELECT 1 FROM g.t t WHERE t.id = d.id
    AND t.HASH_KEY = d.etl_craft_hash AND t.ACTIVE_FLAG = 'Y' AND (t.DELETE_FLAG IS NULL OR t.DELETE_FLAG <> 'Y')
)
;
BEGIN
;
UPDATE g.t AS t SET ACTIVE_FLAG = 'N', VALID_TO = d.etl_craft_valid_from, UPDATE_DATE = CAST(? AS TIMESTAMP_TZ(6)), UPDATED_BY = CAST(? AS VARCHAR), CLOSED_PIPELINE_RUN_ID = CAST(? AS NUMBER(38,0)), CLOSED_TASK_RUN_ID = CAST(? AS NUMBER(38,0))
FROM etl_delta AS d
WHERE t.id = d.id AND (t.ACTIVE_FLAG = 'Y' AND (t.HASH_KEY IS DISTINCT FROM d.etl_craft_hash OR t.DELETE_FLAG = 'Y'))
;
SELECT COLUMN_NAME, DATA_TYPE FROM <database>.INFORMATION_SCHEMA.COLUMNS
WHERE TABLE_SCHEMA = UPPER(?) AND TABLE_NAME = UPPER(?)
ORDER BY ORDINAL_POSITION
;
DESCRIBE TABLE <database>.g.t
;
INSERT INTO g.t (ID, CODE, AMOUNT, HASH_KEY, CREATE_DATE, CREATED_BY, DELETE_FLAG, ACTIVE_FLAG, VALID_FROM, UPDATE_DATE, UPDATED_BY, PIPELINE_ID, PIPELINE_RUN_ID, TASK_RUN_ID)
SELECT d.ID, d.CODE, d.AMOUNT, d.etl_craft_hash, CAST(? AS TIMESTAMP_TZ(6)), CAST(? AS VARCHAR), 'N', 'Y', d.etl_craft_valid_from, CAST(? AS TIMESTAMP_TZ(6)), CAST(? AS VARCHAR), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0))
FROM etl_delta d WHERE NOT EXISTS (SELECT 1 FROM g.t t WHERE t.id = d.id AND t.ACTIVE_FLAG = 'Y')
;
SELECT COLUMN_NAME, DATA_TYPE FROM <database>.INFORMATION_SCHEMA.COLUMNS
WHERE TABLE_SCHEMA = UPPER(?) AND TABLE_NAME = UPPER(?)
ORDER BY ORDINAL_POSITION
;
DESCRIBE TABLE <database>.g.t
;
INSERT INTO g.t (amount, code, id, HASH_KEY, CREATE_DATE, CREATED_BY, DELETE_FLAG, ACTIVE_FLAG, VALID_FROM, UPDATE_DATE, UPDATED_BY, PIPELINE_ID, PIPELINE_RUN_ID, TASK_RUN_ID)
SELECT d.amount, d.code, d.id, d.HASH_KEY, CAST(? AS TIMESTAMP_TZ(6)), CAST(? AS VARCHAR), 'Y', 'Y', CAST(? AS TIMESTAMP_TZ(6)), CAST(? AS TIMESTAMP_TZ(6)), CAST(? AS VARCHAR), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0)), CAST(? AS NUMBER(38,0))
FROM (SELECT * FROM g.t t WHERE t.ACTIVE_FLAG = 'Y' AND (t.DELETE_FLAG IS NULL OR t.DELETE_FLAG <> 'Y') AND NOT EXISTS (SELECT 1 FROM etl_stage d WHERE t.id = d.id)) d
;
UPDATE g.t AS t SET ACTIVE_FLAG = 'N', VALID_TO = CAST(? AS TIMESTAMP_TZ(6)), UPDATE_DATE = CAST(? AS TIMESTAMP_TZ(6)), UPDATED_BY = CAST(? AS VARCHAR), CLOSED_PIPELINE_RUN_ID = CAST(? AS NUMBER(38,0)), CLOSED_TASK_RUN_ID = CAST(? AS NUMBER(38,0))
WHERE t.ACTIVE_FLAG = 'Y' AND (t.DELETE_FLAG IS NULL OR t.DELETE_FLAG <> 'Y') AND NOT EXISTS (SELECT 1 FROM etl_stage d WHERE t.id = d.id)
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
;
DROP TABLE IF EXISTS etl_delta
