-- Workers record where they serve their running attempts' logs to readers on other hosts.
ALTER TABLE AUD_WORKERS ADD COLUMN LOG_ENDPOINT VARCHAR(512);
COMMENT ON COLUMN AUD_WORKERS.LOG_ENDPOINT IS 'Where the worker serves the logs of the attempts it runs (read with a worker token); NULL: it serves none.';
