-- This run's interactions that no REJECT rule holds back; etl-craft keeps the rejected
-- keys of pre_dm.interactions in etl_craft.rejected__pre_dm__interactions.
SELECT p.source_system, p.interaction_id, p.customer_id, p.customer_type, p.customer_segment,
       p.agent_id, p.agent_name, p.agent_team, p.support_area, p.support_area_name,
       p.support_category, p.channel, p.opened_at, p.handle_seconds, p.status,
       p.first_contact, p.rating, p.source_updated_at
  FROM pre_dm.interactions p
 WHERE NOT EXISTS (
       SELECT 1
         FROM etl_craft.rejected__pre_dm__interactions r
        WHERE r.source_system = p.source_system
          AND r.interaction_id = p.interaction_id)
