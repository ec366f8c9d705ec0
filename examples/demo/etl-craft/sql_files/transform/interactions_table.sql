-- The columns of prs.interactions and cdc.interactions: one client-neutral shape.
SELECT CAST(NULL AS VARCHAR(8)) AS source_system,
       CAST(NULL AS VARCHAR(32)) AS interaction_id,
       CAST(NULL AS VARCHAR(16)) AS customer_id,
       CAST(NULL AS VARCHAR(16)) AS customer_type,
       CAST(NULL AS VARCHAR(8)) AS agent_id,
       CAST(NULL AS VARCHAR(8)) AS support_area,
       CAST(NULL AS VARCHAR(8)) AS channel,
       CAST(NULL AS TIMESTAMP) AS opened_at,
       CAST(NULL AS INTEGER) AS handle_seconds,
       CAST(NULL AS VARCHAR(16)) AS status,
       CAST(NULL AS VARCHAR(1)) AS first_contact,
       CAST(NULL AS INTEGER) AS rating,
       CAST(NULL AS TIMESTAMP) AS source_updated_at
