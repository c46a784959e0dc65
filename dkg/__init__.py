"""dkg: Decision Knowledge Graphs from clinical practice guidelines.

The domain package. Plain, typed Python with no Prefect import: Prefect tasks in
``tasks/`` wrap these functions, flows in ``flows/`` compose the tasks.
"""

__version__ = "0.1.0"
