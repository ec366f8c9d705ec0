-- Every landed order; the merge keeps one row per order_id.
SELECT order_id, customer_id, amount
  FROM lnd.orders
