-- The overseer's leadership as a row with a fencing epoch: the advisory lock decides who may
-- take it, the epoch refuses a former leader's writes after a restart dropped its lock.
CREATE TABLE AUD_LEADERSHIP (
    LEADER_ROLE VARCHAR(32) NOT NULL CONSTRAINT PK_AUD_LEADERSHIP PRIMARY KEY,
    EPOCH BIGINT NOT NULL CONSTRAINT CK_AUD_LEADERSHIP_EPOCH CHECK (EPOCH > 0),
    OVERSEER_ID VARCHAR(256) NOT NULL,
    TAKEN_AT TEXT NOT NULL
);
