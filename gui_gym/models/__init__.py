"""Learned or LLM-backed components behind small protocols, one sub-package a job:

* :mod:`~gui_gym.models.llm`: model backends and generation, the thing that talks to a
  model (the ``LLM`` protocol, ``ScriptedLLM``, ``TransformersLLM``, ``OpenAICompatLLM``, the
  one HTTP client, chat formats, vision inputs and prompts, a stub server, tiny test models);
* :mod:`~gui_gym.models.judge`: ProRe, the proactive outcome judge (rule-based and LLM
  components and the pipeline that runs them);
* :mod:`~gui_gym.models.prm`: process reward models, scorers of one step (rule, transformers,
  vision-language, server, LLM step judge);
* :mod:`~gui_gym.models.milestones`: ADMIRE's milestone generators, matchers and tracker;
* :mod:`~gui_gym.models.progress`: ProgRM's progress models (rule-based, learned, prompted);
* :mod:`~gui_gym.models.embeddings`: sentence embedders and the batch-filled cache.

Models import only :mod:`gui_gym.core` and :mod:`gui_gym.rewards`. Heavy libraries (torch,
transformers, sentence-transformers) are imported inside the classes that need them, never
at package import."""
