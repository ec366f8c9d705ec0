-- SCD1_MERGE and SCD2_MERGE count new, changed and unchanged keys apart from the rows they write.
ALTER TABLE AUD_TASK_RUN_LOG ADD COLUMN NEW_KEY_COUNT BIGINT;
ALTER TABLE AUD_TASK_RUN_LOG ADD COLUMN CHANGED_KEY_COUNT BIGINT;
ALTER TABLE AUD_TASK_RUN_LOG ADD COLUMN UNCHANGED_KEY_COUNT BIGINT;
ALTER TABLE AUD_TASK_ATTEMPTS ADD COLUMN NEW_KEY_COUNT BIGINT;
ALTER TABLE AUD_TASK_ATTEMPTS ADD COLUMN CHANGED_KEY_COUNT BIGINT;
ALTER TABLE AUD_TASK_ATTEMPTS ADD COLUMN UNCHANGED_KEY_COUNT BIGINT;
COMMENT ON COLUMN AUD_TASK_RUN_LOG.NEW_KEY_COUNT IS 'Keys a merge found without a current version (SCD2: a returning key counts here) in the latest attempt.';
COMMENT ON COLUMN AUD_TASK_RUN_LOG.CHANGED_KEY_COUNT IS 'Keys a merge found with a differing current version (SCD2: one version closed and one opened each) in the latest attempt.';
COMMENT ON COLUMN AUD_TASK_RUN_LOG.UNCHANGED_KEY_COUNT IS 'Keys a merge left alone because their current version matched in the latest attempt.';
COMMENT ON COLUMN AUD_TASK_ATTEMPTS.NEW_KEY_COUNT IS 'Keys a merge found without a current version (SCD2: a returning key counts here).';
COMMENT ON COLUMN AUD_TASK_ATTEMPTS.CHANGED_KEY_COUNT IS 'Keys a merge found with a differing current version (SCD2: one version closed and one opened each).';
COMMENT ON COLUMN AUD_TASK_ATTEMPTS.UNCHANGED_KEY_COUNT IS 'Keys a merge left alone because their current version matched.';
