-- Deleting an attempt or a run checks each table that references it; without an index each check
-- reads the whole referencing table, so a purge slowed as alert deliveries and offsets grew.
CREATE INDEX IX_AUD_ALERT_DELIVERIES_ATTEMPT ON AUD_ALERT_DELIVERIES (ATTEMPT_ID);
CREATE INDEX IX_AUD_ALERT_DELIVERIES_RUN ON AUD_ALERT_DELIVERIES (PIPELINE_RUN_ID);
CREATE INDEX IX_AUD_TASK_OFFSETS_ATTEMPT ON AUD_TASK_OFFSETS (ATTEMPT_ID);
