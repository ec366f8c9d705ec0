"""Turns etl-craft's versioned YAML into Airflow DAGs; never imports etl_craft."""
