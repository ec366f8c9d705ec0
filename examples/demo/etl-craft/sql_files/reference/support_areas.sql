-- The support areas every client's interactions are filed under.
SELECT area_code, area_name, category
  FROM (VALUES ('BILL', 'Billing and payments', 'Finance'),
               ('TECH', 'Technical support', 'Product'),
               ('ACCT', 'Account management', 'Customer'),
               ('SHIP', 'Shipping and delivery', 'Logistics'),
               ('RETN', 'Returns and refunds', 'Logistics')) AS areas (area_code, area_name, category)
