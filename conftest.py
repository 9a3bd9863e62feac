"""Root conftest: registers the workspace's shared fixture plugins for every test directory."""

# Order matters: a plugin imported by a later one must be registered first (assertion rewriting).
pytest_plugins = [
    "tests.fixtures.servers",
    "tests.fixtures.system_tools",
    "tests.fixtures.llm",
    "tests.fixtures.podman",
    "tests.fixtures.dockerd",
    "tests.fixtures.engines",
    "tests.fixtures.typescript",
    "tests.fixtures.host_sockets",
]
