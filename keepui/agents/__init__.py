"""keepui for agents: the MCP server and the LangGraph / LangChain adapters."""
