"""Report types: what runs after a method or a workflow run (also a failed
one), reads the run's record and the data it wrote, and writes a report
(markdown and JSON) as versioned data of the run. See docs/reports.md."""
