"""The queue: its table of tasks (pending.py) and what a write queues (after_write.py). The work
package runs the tasks; ingest and the engine queue them."""
