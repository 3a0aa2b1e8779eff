"""handrail as an MCP server: any agent's tool calls as a supervised run (core/mcp/server.py)."""
