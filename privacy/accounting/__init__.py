"""The accounting core: guarantees, events, per-event handlers, composition routes and the typed accountant."""
