"""Speech-recognition error rates: text normalizers and alignment-count kernels (pure, no I/O)."""
