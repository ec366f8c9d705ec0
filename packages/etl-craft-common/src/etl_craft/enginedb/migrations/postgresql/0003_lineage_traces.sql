-- Column lineage of SQL tasks, kept by what each trace depends on.
CREATE TABLE AUD_LINEAGE_TRACES (
    TASK_ID BIGINT NOT NULL CONSTRAINT PK_AUD_LINEAGE_TRACES PRIMARY KEY CONSTRAINT FK_AUD_LINEAGE_TRACES_TASK REFERENCES CFG_TASKS (TASK_ID),
    SQL_HASH VARCHAR(64) NOT NULL,
    INPUT_HASH VARCHAR(64) NOT NULL,
    TRACE TEXT NOT NULL,
    TRACED_AT TIMESTAMPTZ NOT NULL,
    TRACED_BY VARCHAR(128) NOT NULL
);
COMMENT ON TABLE AUD_LINEAGE_TRACES IS 'The column lineage of each SQL task''s SELECT, kept so that a rebuild traces only what changed.';
COMMENT ON COLUMN AUD_LINEAGE_TRACES.TASK_ID IS 'The SQL task.';
COMMENT ON COLUMN AUD_LINEAGE_TRACES.SQL_HASH IS 'SHA-256 of the SELECT after tokens, its sqlglot dialect and the sqlglot version.';
COMMENT ON COLUMN AUD_LINEAGE_TRACES.INPUT_HASH IS 'SHA-256 of SQL_HASH and the known columns of every table the SELECT reads: a trace is reused only while it is equal.';
COMMENT ON COLUMN AUD_LINEAGE_TRACES.TRACE IS 'The trace as JSON: the tables read, each output column with its sources and edge kinds, or why it could not be traced.';
COMMENT ON COLUMN AUD_LINEAGE_TRACES.TRACED_AT IS 'When the SELECT was last traced.';
COMMENT ON COLUMN AUD_LINEAGE_TRACES.TRACED_BY IS 'The actor whose build traced it.';
