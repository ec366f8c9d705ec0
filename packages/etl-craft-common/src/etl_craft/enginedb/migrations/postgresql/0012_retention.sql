-- Retention: etl-craft purge removes history past its retention, and nothing else may. A purge
-- records itself in AUD_ACTIONS first and names that row in etl_craft.purge; the history guards
-- let a DELETE through only in the transaction that wrote that row, so neither the setting
-- alone nor an old action's id opens them, and the write guards still admit only etl-craft's
-- writer roles. The indexes find expired rows oldest first, and the rows that reference them.
CREATE FUNCTION etl_craft_purging() RETURNS boolean LANGUAGE sql STABLE AS $$
SELECT EXISTS (
    SELECT 1 FROM AUD_ACTIONS
     WHERE ACTION_ID = CAST(nullif(current_setting('etl_craft.purge', true), '') AS BIGINT)
       AND COMMAND = 'purge' AND xmin = pg_current_xact_id()::xid)$$;
COMMENT ON FUNCTION etl_craft_purging() IS 'True in a purge''s own transaction only: etl_craft.purge names the AUD_ACTIONS row of a purge this transaction wrote.';

CREATE FUNCTION etl_craft_refuse_unpurged_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND etl_craft_purging() THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION '% is append-only: % of a recorded row is refused, even from etl-craft; only etl-craft purge removes history past its retention',
        upper(TG_TABLE_NAME), TG_OP USING ERRCODE = '42W01';
END $$;
COMMENT ON FUNCTION etl_craft_refuse_unpurged_change() IS 'Append-only guard of history that retention removes: refuses UPDATE and DELETE except a DELETE in a purge''s own transaction.';

CREATE OR REPLACE FUNCTION etl_craft_refuse_terminal_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND etl_craft_purging() THEN
        RETURN OLD;
    END IF;
    IF OLD.STATUS NOT IN ('QUEUED', 'CLAIMED', 'RUNNING') THEN
        RAISE EXCEPTION '% is append-only once an attempt ends: % of attempt % (%) is refused, even from etl-craft',
            upper(TG_TABLE_NAME), TG_OP, OLD.ATTEMPT_ID, OLD.STATUS USING ERRCODE = '42W01';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END $$;

CREATE INDEX IX_AUD_GATE_DECISIONS_ATTEMPT ON AUD_GATE_DECISIONS (ATTEMPT_ID);
CREATE INDEX IX_AUD_GATE_DECISIONS_SELECTED ON AUD_GATE_DECISIONS (SELECTED_PIPELINE_RUN_ID);
CREATE INDEX IX_AUD_DEPENDENCY_CONSUMPTION_RUN ON AUD_DEPENDENCY_CONSUMPTION (PIPELINE_RUN_ID);
CREATE INDEX IX_AUD_DEPENDENCY_CONSUMPTION_DECISION ON AUD_DEPENDENCY_CONSUMPTION (DECISION_ID);
CREATE INDEX IX_AUD_DEPENDENCY_CONSUMPTION_CONSUMED ON AUD_DEPENDENCY_CONSUMPTION (CONSUMED_AT);
CREATE INDEX IX_AUD_RUN_INTERVENTIONS_TASK_RUN ON AUD_RUN_INTERVENTIONS (TASK_RUN_ID);
CREATE INDEX IX_AUD_PIPELINES_RUN_LOG_ENDED ON AUD_PIPELINES_RUN_LOG (END_DATE);
CREATE INDEX IX_AUD_TASK_ATTEMPTS_ENDED ON AUD_TASK_ATTEMPTS (ENDED_AT);
CREATE INDEX IX_AUD_DOWNSTREAM_RERUNS_RUN ON AUD_DOWNSTREAM_RERUNS (PIPELINE_RUN_ID);
