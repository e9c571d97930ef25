"""Background work: the durable pending queue, its task handlers and the worker thread."""
