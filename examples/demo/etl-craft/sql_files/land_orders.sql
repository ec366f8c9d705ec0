-- Twenty synthetic orders for the run date; a real project reads its landed source here.
SELECT g.n AS order_id,
       100 + g.n % 7 AS customer_id,
       $$run_date AS order_date,
       CAST(10 + g.n * 2.5 AS DECIMAL(12, 2)) AS amount
  FROM range(1, 21) AS g(n)
