-- Workers record where they serve their running attempts' logs to readers on other hosts.
ALTER TABLE AUD_WORKERS ADD COLUMN LOG_ENDPOINT VARCHAR(512);
