-- The changes of this run: the versions prs opened in it.
SELECT source_system, interaction_id, customer_id, customer_type, agent_id, support_area,
       channel, opened_at, handle_seconds, status, first_contact, rating, source_updated_at
  FROM prs.interactions
 WHERE PIPELINE_RUN_ID = $$pipeline_run_id
   AND ACTIVE_FLAG = 'Y'
