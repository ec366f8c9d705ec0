-- The rules check_interactions judges on pre_dm.interactions, in two waves: first what
-- holds the run back (INCOMPLETE) or keeps keys out of dm (REJECT), then what is only
-- reported (REPORT).
INSERT INTO CFG_BUSINESS_RULES (TASK_ID, RULE_CODE, RULE_TYPE, TARGET_TABLE, KEY_COLUMNS, RULE_SQL, WAVE, DESCRIPTION)
SELECT k.TASK_ID, x.RULE_CODE, x.RULE_TYPE, 'pre_dm.interactions', 'source_system, interaction_id',
       x.RULE_SQL, x.WAVE, x.DESCRIPTION
  FROM (SELECT 'unknown_support_area' AS RULE_CODE, 'INCOMPLETE' AS RULE_TYPE, 1 AS WAVE,
               'SELECT source_system, interaction_id FROM pre_dm.interactions WHERE support_area_name IS NULL' AS RULE_SQL,
               'An interaction filed under a support area the reference data does not know: hold the run back until the lookup catches up' AS DESCRIPTION
        UNION ALL SELECT 'missing_customer', 'REJECT', 1,
               'SELECT source_system, interaction_id FROM pre_dm.interactions WHERE customer_id IS NULL',
               'An interaction without a customer can''t be attributed: keep it out of dm'
        UNION ALL SELECT 'rating_out_of_range', 'REJECT', 1,
               'SELECT source_system, interaction_id FROM pre_dm.interactions WHERE rating < 1 OR rating > 5',
               'A satisfaction rating outside 1 to 5 is a source error: keep it out of dm'
        UNION ALL SELECT 'negative_handle_time', 'REJECT', 1,
               'SELECT source_system, interaction_id FROM pre_dm.interactions WHERE handle_seconds < 0',
               'A negative handle time is a clock error: keep it out of dm'
        UNION ALL SELECT 'long_handle_time', 'REPORT', 2,
               'SELECT source_system, interaction_id FROM pre_dm.interactions WHERE handle_seconds > 3600',
               'Calls over an hour are valid but worth a look by the team lead') x
  JOIN CFG_PIPELINES p ON p.PIPELINE_CODE = 'si_transform' AND p.ACTIVE_FLAG = 'Y'
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo'
  JOIN CFG_TASKS k ON k.PIPELINE_ID = p.PIPELINE_ID AND k.TASK_CODE = 'check_interactions';
