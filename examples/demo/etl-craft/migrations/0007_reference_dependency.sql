-- The transform joins the reference data: it waits for the reference pipeline's run too, so
-- it never reads lookups a concurrent reference run is still rebuilding.
INSERT INTO CFG_PIPELINE_DEPENDENCY (PIPELINE_ID, DEPENDS_ON_PIPELINE_ID, DEPENDENCY_TYPE)
SELECT p.PIPELINE_ID, u.PIPELINE_ID, 'SUCCESS'
  FROM CFG_PIPELINES p
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo'
  JOIN CFG_PIPELINES u ON u.PROJECT_ID = p.PROJECT_ID AND u.ACTIVE_FLAG = 'Y'
   AND u.PIPELINE_CODE = 'si_reference'
 WHERE p.PIPELINE_CODE = 'si_transform' AND p.ACTIVE_FLAG = 'Y';
