-- name: active_business_rules --
-- The active rules a BUSINESS_RULES task checks, in wave order.
SELECT BUSINESS_RULE_ID AS business_rule_id, RULE_CODE AS rule_code, RULE_TYPE AS rule_type,
       TARGET_TABLE AS target_table, KEY_COLUMNS AS key_columns, RULE_SQL AS rule_sql,
       WAVE AS wave
  FROM CFG_BUSINESS_RULES
 WHERE TASK_ID = :task_id AND ACTIVE_FLAG = 'Y'
 ORDER BY WAVE, RULE_CODE;

-- name: standing_rule_flags --
-- The keys a rule has flagged and not cleared.
SELECT KEY_VALUE AS key_value
  FROM AUD_BUSINESS_RULE_FLAGS
 WHERE BUSINESS_RULE_ID = :rule_id AND CLEARED_AT IS NULL;

-- name: open_rule_flag --
-- Open a flag for a key that newly breaks a rule (one row; run with many parameter sets).
INSERT INTO AUD_BUSINESS_RULE_FLAGS (BUSINESS_RULE_ID, RULE_TYPE, TARGET_TABLE, KEY_VALUE,
       OPENED_AT, OPENED_TASK_RUN_ID, LAST_SEEN_AT, LAST_SEEN_TASK_RUN_ID)
VALUES (:rule_id, :rule_type, :target_table, :key_value,
       etl_craft_now(), :task_run_id, etl_craft_now(), :task_run_id);

-- name: see_rule_flags --
-- Mark standing flags as seen again by this task run (at most 1,000 keys: 1,002 parameters).
UPDATE AUD_BUSINESS_RULE_FLAGS
   SET LAST_SEEN_AT = etl_craft_now(), LAST_SEEN_TASK_RUN_ID = :task_run_id
 WHERE BUSINESS_RULE_ID = :rule_id AND CLEARED_AT IS NULL AND KEY_VALUE IN :keys;

-- name: clear_passed_rule_flags --
-- Clear standing flags whose keys pass the rule again (at most 1,000 keys: 1,002 parameters).
UPDATE AUD_BUSINESS_RULE_FLAGS
   SET CLEARED_AT = etl_craft_now(), CLEARED_TASK_RUN_ID = :task_run_id, CLEAR_REASON = 'PASSED'
 WHERE BUSINESS_RULE_ID = :rule_id AND CLEARED_AT IS NULL AND KEY_VALUE IN :keys;

-- name: clear_deleted_rule_flags --
-- Clear standing flags whose keys have no active row left (at most 1,000 keys: 1,002 parameters).
UPDATE AUD_BUSINESS_RULE_FLAGS
   SET CLEARED_AT = etl_craft_now(), CLEARED_TASK_RUN_ID = :task_run_id,
       CLEAR_REASON = 'KEY_DELETED'
 WHERE BUSINESS_RULE_ID = :rule_id AND CLEARED_AT IS NULL AND KEY_VALUE IN :keys;

-- name: standing_reject_keys --
-- The keys of a table that some REJECT rule flags and no check has cleared.
SELECT DISTINCT KEY_VALUE AS key_value
  FROM AUD_BUSINESS_RULE_FLAGS
 WHERE TARGET_TABLE = :target_table AND RULE_TYPE = 'REJECT' AND CLEARED_AT IS NULL
 ORDER BY KEY_VALUE;
