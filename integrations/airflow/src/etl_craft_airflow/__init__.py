"""Turns etl-craft's versioned YAML into Airflow DAGs; never imports etl_craft.

In a file of Airflow's dags folder::

    from etl_craft_airflow import load_dags

    load_dags("/path/to/generated/yaml", globals())
"""

from etl_craft_airflow.documents import SUPPORTED_VERSIONS, DagFileError, DagSpec, read_folder
from etl_craft_airflow.factory import build_dag, load_dags

__all__ = ["SUPPORTED_VERSIONS", "DagFileError", "DagSpec", "build_dag", "load_dags", "read_folder"]
