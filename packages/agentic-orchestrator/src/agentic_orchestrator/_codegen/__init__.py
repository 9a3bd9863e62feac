"""The grounded code loop: plan, generate, assemble, compile and test in a sandbox, fingerprint
the errors and let the arbiter decide to repair, redo or stop; plus the project-local TypeScript
toolchain the compile step uses. Public names are re-exported from ``agentic_orchestrator``."""
