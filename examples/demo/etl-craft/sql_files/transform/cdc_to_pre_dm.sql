-- This run's changes with their lookups; a code missing from the reference data leaves a
-- NULL name, which the unknown_support_area rule holds back.
SELECT c.source_system, c.interaction_id, c.customer_id, c.customer_type,
       t.segment AS customer_segment,
       c.agent_id, g.agent_name, g.team AS agent_team,
       c.support_area, a.area_name AS support_area_name, a.category AS support_category,
       c.channel, c.opened_at, c.handle_seconds, c.status, c.first_contact, c.rating,
       c.source_updated_at
  FROM cdc.interactions c
  LEFT JOIN ref.support_areas a ON a.area_code = c.support_area
  LEFT JOIN ref.agents g ON g.agent_id = c.agent_id
  LEFT JOIN ref.customer_types t ON t.customer_type = c.customer_type
