"""keepui mcp: the MCP server (stdio) over one Workbench."""
