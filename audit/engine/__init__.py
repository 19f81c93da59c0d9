"""The audit engine: neighbouring pairs, views, coupled runs, executors and the mechanism-level audits they feed."""
