from agentic_sandbox._docker_sandbox import DockerSandbox as DockerSandbox
from agentic_sandbox._errors import SandboxError as SandboxError
from agentic_sandbox._errors import SandboxNotReadyError as SandboxNotReadyError
from agentic_sandbox._executor import CodeExecutionRequest as CodeExecutionRequest
from agentic_sandbox._executor import SandboxExecutor as SandboxExecutor
from agentic_sandbox._process_sandbox import ProcessSandbox as ProcessSandbox

__version__: str
__all__: list[str]
