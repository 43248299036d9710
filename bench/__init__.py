"""Benchmarks for rpcweave: each module compares one layer against a hand-written floor."""
