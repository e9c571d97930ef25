"""What front ends hold: the Workbench facade (workbench.py: typed, documented methods over the
operation registry), the Session that routes each call to an engine of its own, the store's
owner over its socket, or a lock it takes (session.py), and what is composed from Workbench
calls: agents' surfaces, document context, the flow host, the BEIR runner."""
