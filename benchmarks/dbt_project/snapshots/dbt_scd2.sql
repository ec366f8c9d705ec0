-- SCD2_MERGE's rival: a snapshot by the check strategy over every business column; keys the
-- snapshot no longer returns are handled as var hard_deletes says (ignore, invalidate,
-- new_record: SCD2_MISSING_KEYS KEEP, CLOSE, NEW_RECORD).
{% snapshot dbt_scd2 %}
{{ config(
    target_schema='bench',
    unique_key='id',
    strategy='check',
    check_cols=['name', 'email', 'city', 'balance', 'segment'],
    hard_deletes=var('hard_deletes'),
) }}
select id, name, email, city, balance, segment from {{ var('source') }}
{% endsnapshot %}
