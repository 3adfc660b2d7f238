"""Violation matching (a checker's findings against ground truth): the seed's ``std_`` and ``ha_`` metric presets.

``inputs`` types the violation lists at the edge, ``kernels`` holds the pure matching (span IoU, similarities,
weighted score, greedy one-to-one), ``similarity`` the pluggable text similarity, ``metrics`` the registered
sub-types. See docs/violations.md.
"""
