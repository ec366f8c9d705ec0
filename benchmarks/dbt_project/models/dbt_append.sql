-- APPEND_TABLE's rival: an incremental model that appends.
{{ config(materialized='incremental', incremental_strategy='append') }}
select id, name, email, city, balance, segment from {{ var('source') }}
