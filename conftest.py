"""Root conftest: registers the workspace's shared fixture plugins for every test directory."""

pytest_plugins = ["tests.fixtures.servers", "tests.fixtures.llm", "tests.fixtures.podman"]
