-- SCD2_MERGE by a source column counts the keys whose time didn't move their history forward.
ALTER TABLE AUD_TASK_RUN_LOG ADD COLUMN STALE_KEY_COUNT BIGINT;
ALTER TABLE AUD_TASK_RUN_LOG ADD COLUMN SAME_TIME_KEY_COUNT BIGINT;
ALTER TABLE AUD_TASK_RUN_LOG ADD COLUMN REOPENED_KEY_COUNT BIGINT;
ALTER TABLE AUD_TASK_ATTEMPTS ADD COLUMN STALE_KEY_COUNT BIGINT;
ALTER TABLE AUD_TASK_ATTEMPTS ADD COLUMN SAME_TIME_KEY_COUNT BIGINT;
ALTER TABLE AUD_TASK_ATTEMPTS ADD COLUMN REOPENED_KEY_COUNT BIGINT;
COMMENT ON COLUMN AUD_TASK_RUN_LOG.STALE_KEY_COUNT IS 'SCD2_MERGE by a source column: keys left as they were because their time was earlier than their history (or, missing, than the batch''s time), in the latest attempt.';
COMMENT ON COLUMN AUD_TASK_RUN_LOG.SAME_TIME_KEY_COUNT IS 'SCD2_MERGE by a source column: keys whose values changed without a newer time, taken as no change, in the latest attempt.';
COMMENT ON COLUMN AUD_TASK_RUN_LOG.REOPENED_KEY_COUNT IS 'SCD2_MERGE by a source column: returning keys reopened at the batch''s time because their own time was earlier than their closing, in the latest attempt.';
COMMENT ON COLUMN AUD_TASK_ATTEMPTS.STALE_KEY_COUNT IS 'SCD2_MERGE by a source column: keys left as they were because their time was earlier than their history (or, missing, than the batch''s time).';
COMMENT ON COLUMN AUD_TASK_ATTEMPTS.SAME_TIME_KEY_COUNT IS 'SCD2_MERGE by a source column: keys whose values changed without a newer time, taken as no change.';
COMMENT ON COLUMN AUD_TASK_ATTEMPTS.REOPENED_KEY_COUNT IS 'SCD2_MERGE by a source column: returning keys reopened at the batch''s time because their own time was earlier than their closing.';
