-- The overseer's leadership as a row with a fencing epoch: the advisory lock decides who may
-- take it, the epoch refuses a former leader's writes after a restart dropped its lock.
CREATE TABLE AUD_LEADERSHIP (
    LEADER_ROLE VARCHAR(32) NOT NULL CONSTRAINT PK_AUD_LEADERSHIP PRIMARY KEY,
    EPOCH BIGINT NOT NULL CONSTRAINT CK_AUD_LEADERSHIP_EPOCH CHECK (EPOCH > 0),
    OVERSEER_ID VARCHAR(256) NOT NULL,
    TAKEN_AT TIMESTAMPTZ NOT NULL
);
COMMENT ON TABLE AUD_LEADERSHIP IS 'Who leads: one row per leader role (overseer), whose epoch grows at every takeover; every leader-only write checks it holds the current epoch.';
COMMENT ON COLUMN AUD_LEADERSHIP.LEADER_ROLE IS 'The role led: overseer.';
COMMENT ON COLUMN AUD_LEADERSHIP.EPOCH IS 'Grows by one each time a process takes the lead; a write carrying an older epoch is refused.';
COMMENT ON COLUMN AUD_LEADERSHIP.OVERSEER_ID IS 'The overseer that took the current epoch (its owner id).';
COMMENT ON COLUMN AUD_LEADERSHIP.TAKEN_AT IS 'When it took it.';
