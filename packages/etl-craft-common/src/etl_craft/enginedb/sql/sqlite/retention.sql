-- name: lock_purged_runs --
-- The runs of one purge batch that are still ended (SQLite: the write transaction already excludes every other writer).
SELECT PIPELINE_RUN_ID AS id
  FROM AUD_PIPELINES_RUN_LOG
 WHERE PIPELINE_RUN_ID IN :run_id_list
   AND STATUS IN ('SUCCESS', 'FAILED', 'SKIPPED', 'CANCELLED')
 ORDER BY PIPELINE_RUN_ID;

-- name: purge_archive_columns --
-- The columns of one purged table, in order, with their declared types.
SELECT lower(name) AS column_name, type AS data_type
  FROM pragma_table_info(:table_name)
 ORDER BY cid;
