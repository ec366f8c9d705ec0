SELECT order_date, count(*) AS orders, sum(amount) AS revenue
  FROM lnd.orders
 GROUP BY order_date
