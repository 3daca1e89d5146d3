"""Nonsmooth mechanics: the switching laws of contacts, impacts and friction, run by the event loop."""
