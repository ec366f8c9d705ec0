-- name: purge_archive_columns --
-- The columns of one purged table, in order, with their types.
SELECT lower(column_name) AS column_name, data_type AS data_type
  FROM information_schema.columns
 WHERE table_schema = current_schema() AND table_name = lower(:table_name)
 ORDER BY ordinal_position;
