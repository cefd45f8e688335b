"""Learned or LLM-backed components behind small protocols (embeddings, LLMs, reward and
progress models). Heavy libraries (torch, transformers, sentence-transformers) are imported
inside the classes that need them, never at package import."""
