from agentic_mcp._client import MCPClient as MCPClient
from agentic_mcp._codemode import CodeMode as CodeMode
from agentic_mcp._codemode import CodeModeTool as CodeModeTool
from agentic_mcp._codemode_executor import CodeModeExecutor as CodeModeExecutor
from agentic_mcp._codemode_executor import CodeModeRequest as CodeModeRequest
from agentic_mcp._config import MCPServerConfig as MCPServerConfig
from agentic_mcp._errors import MCPClientClosedError as MCPClientClosedError
from agentic_mcp._errors import MCPClientError as MCPClientError
from agentic_mcp._errors import MCPConnectionError as MCPConnectionError
from agentic_mcp._errors import MCPServeError as MCPServeError
from agentic_mcp._errors import MCPTimeoutError as MCPTimeoutError
from agentic_mcp._errors import MCPToolError as MCPToolError
from agentic_mcp._errors import MCPToolNotAllowedError as MCPToolNotAllowedError
from agentic_mcp._errors import MCPToolNotFoundError as MCPToolNotFoundError
from agentic_mcp._models import CodeModeResult as CodeModeResult
from agentic_mcp._models import MCPToolInfo as MCPToolInfo
from agentic_mcp._models import MCPToolResult as MCPToolResult
from agentic_mcp._models import ServerStatus as ServerStatus
from agentic_mcp._models import ToolCallRecord as ToolCallRecord
from agentic_mcp._server._serve import create_mcp_app as create_mcp_app
from agentic_mcp._server._serve import serve_mcp as serve_mcp
from agentic_mcp._server._server import create_mcp_server as create_mcp_server
from agentic_mcp._tools import MCPTool as MCPTool

__version__: str
__all__: list[str]
