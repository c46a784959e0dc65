"""The question reader as a pipeline: one shared document (:mod:`.doc`) that small components read and write.

Each component in :mod:`.components` has one job (ages, percentages, markers, the treatment history, the intent,
…), registers itself by name and imports only the document type, general helpers (:mod:`.text`) and the
registry-driven vocabulary; the order they run in is data (``conf/reader.yaml``).
"""
