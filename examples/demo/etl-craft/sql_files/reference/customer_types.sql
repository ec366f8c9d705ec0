-- Customer segments and the response target each is promised.
SELECT customer_type, segment, target_response_minutes
  FROM (VALUES ('NEW', 'Newly acquired', 60),
               ('RETURNING', 'Established', 120),
               ('VIP', 'Priority', 15)) AS types (customer_type, segment, target_response_minutes)
