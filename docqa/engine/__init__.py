"""The continuous-batching generation engine."""
