"""handrail's Textual observatory and its command line."""
