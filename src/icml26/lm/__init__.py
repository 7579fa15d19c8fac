"""Tiny language models trained inside the pipeline.

Shared by the language-model papers (telescope-perplexity, cofrgenets, castle, muloco, ...):

- ``corpus``: text that ships with Python (``pydoc_data.topics``; stdlib docstrings), its
  SHA-256 and the Python version for provenance, character- and word-level tokenizers and
  contiguous splits. numpy only.
- ``model``: a small decoder-only transformer (pre-LayerNorm GPT) whose attention and
  feed-forward blocks are pluggable factories. torch.
- ``optim``: AdamW and Muon written out (``torch.optim`` costs ~2.5 CPU-s of imports per job),
  warm-up + cosine schedule, gradient clipping. torch.
- ``train``: batches, a seeded training loop, validation loss, per-token log-probabilities
  and temperature / nucleus sampling. torch.
- ``multilingual``: seeded synthetic languages over a base vocabulary (controlled token
  overlap, word-order changes) and high- / low-resource corpus sizes and splits. numpy.
- ``quant``: post-training quantisation of linear layers: per-channel round-to-nearest and
  GPTQ (damping, error feedback, optional per-token weights), static activation quantisation,
  a drop-in ``QuantLinear``; tested on layers whose optimal quantisation is known. torch.
- ``grpo``: a verifiable-reward task with an exact checker, group-normalised advantages, the
  clipped policy-gradient loss with an optional KL term, and group sampling. torch.

Import ``model``, ``optim`` and ``train`` only inside train functions, never at module level of
a paper's experiment, claims or figures module.
"""
