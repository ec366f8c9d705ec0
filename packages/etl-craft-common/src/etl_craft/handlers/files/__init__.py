"""Built-in file loads: a PYTHON task with FILE_PATTERN instead of SCRIPT lands CSV, JSONL or
Parquet files into TARGET_OBJECT, each file once per content."""
