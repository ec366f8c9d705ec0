-- Run once by the postgres image on an empty data volume: the Engine DB and the warehouse,
-- two databases of one server, both owned by the login the services use.
CREATE DATABASE etl_craft_engine;
CREATE DATABASE etl_craft_warehouse;
