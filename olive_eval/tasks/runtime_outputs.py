"""The outputs a runtime adds to a model's own, named once: a runtime declares which it gives
(``Runtime.emits``), a post-process which it requires or uses when given (``PostProcess.requires`` / ``uses``),
and the plan checks one against the other before any model loads."""

from __future__ import annotations

#: Generated token ids (a transformers model's ``generate()``).
SEQUENCES = "sequences"
#: The prompt's tokens at the start of each generated sequence (a decoder-only model), to strip before decoding.
PROMPT_LENGTH = "prompt_length"
#: Each clip's own output frames in a padded audio batch (a CTC model): the frames past it come from padding.
OUTPUT_LENGTHS = "output_lengths"
