"""Pipeline specs: ``pipelines/<code>.yml`` files read into a model and compiled to CFG_ rows."""
