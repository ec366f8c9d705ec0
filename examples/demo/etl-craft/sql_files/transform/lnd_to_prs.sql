-- Every landed version of every client, in one shape. The SCD2 merge keeps the newest row
-- of each key (MERGE_DEDUPE_ORDER), drops Beta's redelivered duplicates, and opens a new
-- version only for a key whose values changed.
SELECT 'ALPHA' AS source_system, interaction_id, customer_id, customer_type, agent_id,
       support_area, channel, opened_at, handle_seconds, status, first_contact, rating,
       source_updated_at
  FROM lnd.client_alpha_interactions
UNION ALL
SELECT 'BETA', interaction_id, customer_id, customer_type, agent_id,
       support_area, channel, opened_at, handle_seconds, status, first_contact, rating,
       source_updated_at
  FROM lnd.client_beta_interactions
UNION ALL
SELECT 'GAMMA', interaction_id, customer_id, customer_type, agent_id,
       support_area, channel, opened_at, handle_seconds, status, first_contact, rating,
       source_updated_at
  FROM lnd.client_gamma_interactions
