-- Orders and revenue per customer, rebuilt from the merged orders.
SELECT customer_id,
       COUNT(*) AS order_count,
       SUM(amount) AS revenue
  FROM dm.orders
 GROUP BY customer_id
