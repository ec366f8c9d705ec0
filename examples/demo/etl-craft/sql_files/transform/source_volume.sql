-- The dashboard's volume per client, from the current facts; rebuilt whatever the merge did.
SELECT source_system,
       COUNT(*) AS interactions,
       SUM(CASE WHEN status = 'RESOLVED' THEN 1 ELSE 0 END) AS resolved,
       SUM(CASE WHEN first_contact = 'Y' THEN 1 ELSE 0 END) AS resolved_first_contact,
       CAST(AVG(handle_seconds) AS INTEGER) AS average_handle_seconds
  FROM dm.customer_support_fact
 WHERE ACTIVE_FLAG = 'Y'
 GROUP BY source_system
