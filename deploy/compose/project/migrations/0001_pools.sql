-- Two pools, one per kind of worker: each task names its pool with the POOL parameter.
INSERT INTO CFG_POOLS (POOL_NAME, DESCRIPTION)
VALUES ('ingestion', 'Ingestion scripts: the workers that reach the sources');
INSERT INTO CFG_POOLS (POOL_NAME, DESCRIPTION)
VALUES ('warehouse', 'SQL tasks: the workers that run the warehouse''s statements');
