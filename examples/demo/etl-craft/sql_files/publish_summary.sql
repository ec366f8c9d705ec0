SELECT order_date, orders, revenue FROM dm.daily_orders
