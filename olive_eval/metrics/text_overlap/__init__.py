"""Text-overlap metrics: ROUGE with rouge-score's semantics (own kernels) and sacrebleu's BLEU, chrF and TER."""
