"""The leaf layer: types, typed ask events, protocols (the seams), errors, settings, streams. Imports nothing
else of docqa, and loads no model or native library."""
