"""The reports of ``scripts/accuracy_inference.py``, a module each (``cross_check``,
``second_system``, ``step_size``, ``published``, ``newer_vllm``, ``multinode``), over
what they share: the data and the shipped profile's recipe (``common``) and the tables
(``tables``).
"""
