"""The application layer: one function per use case (run a method; run,
resume, approve, reject, cancel a workflow; read, delete and collect data;
shared settings; models). The command line renders what these return, and
serve and workers call the same functions.

This is the only layer that opens a datastore session (lease, pull, run,
push one commit, release, see ``lifecycle``) and the one that decides which
leases a use case needs. The domain packages below (models, workflows,
data) take the datastore and what they need as arguments and never sync."""
