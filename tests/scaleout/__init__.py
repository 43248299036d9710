"""Helpers of the scale-out tests: a throwaway PostgreSQL, server replicas, a proxy."""
