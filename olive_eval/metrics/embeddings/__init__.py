"""Embedding-based text scores (Unitxt's family): sentence-embedding cosine and BERTScore, on local model folders."""
