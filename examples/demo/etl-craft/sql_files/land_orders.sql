SELECT order_id, customer_id, order_date, amount
  FROM src.orders
 WHERE order_date = DATE '$$run_date'
