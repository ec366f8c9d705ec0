-- How many current rows each lookup holds; rebuilt once two of the three merges are in.
SELECT 'support_areas' AS lookup, COUNT(*) AS current_rows FROM ref.support_areas
UNION ALL
SELECT 'agents', COUNT(*) FROM ref.agents
UNION ALL
SELECT 'customer_types', COUNT(*) FROM ref.customer_types
