"""LLM-guided metrics (Valor's text-generation set) scored by a pluggable judge: see docs/judged.md."""
