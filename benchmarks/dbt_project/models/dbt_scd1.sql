-- SCD1_MERGE's rival: an incremental model merged on its key.
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}
select id, name, email, city, balance, segment from {{ var('source') }}
