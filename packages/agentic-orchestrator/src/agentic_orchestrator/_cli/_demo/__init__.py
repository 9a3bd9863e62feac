"""``agentic demo``: the README's main job, offline on the embedded model by default.

Part 1 runs a multi-agent workflow (two agents in parallel, a checker looping the calculator
until its tool call is right, a fan-in); part 2 runs a grounded code loop in the process
sandbox. Both are shown live. The exit code is 0 only when both results are correct.

``_run.run_demo`` runs both parts; ``_party`` and ``_code`` hold what each part asks,
``_scripted`` the model-free replies the tests use.
"""
