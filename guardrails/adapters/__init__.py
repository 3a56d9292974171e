"""Host adapters. Each one only translates between a host and a :class:`~guardrails.Guard`.

Import the one you need (``guardrails.adapters.claude_agent_sdk``,
``guardrails.adapters.openai_agents``, ``guardrails.adapters.langchain``);
each needs its extra (``pip install 'hookrails[claude]'`` and so on).
"""
