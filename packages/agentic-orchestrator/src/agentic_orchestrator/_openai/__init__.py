"""The OpenAI-compatible endpoint: agents and workflows served as "models" on
``/v1/models`` and ``/v1/chat/completions`` (plain and streamed), for any OpenAI client.

``_wire``: the request and response shapes of the OpenAI HTTP API; ``_models``: the served
targets and the bound on concurrent runs; ``_responses``: the ASGI responses that run an agent
(plain or as server-sent events) and cancel it when its client goes; ``_app``: the Starlette app
behind ``ServerGuard`` and ``create_openai_app``; ``_serve``: ``serve_openai``.
"""
