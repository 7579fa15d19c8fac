"""Small reinforcement-learning building blocks shared by the RL papers.

- ``envs``: batched, seeded numpy environments (a 2-D point mass with walls and obstacles, a
  grid world); one call steps every environment of the batch.
- ``buffer``: a numpy replay buffer.
- ``rollout``: batched episode collection and evaluation (success, return, violations).
- ``nets`` (torch): MLPs, a tanh-Gaussian policy, Q-networks. Import it only where torch is used.
- ``optim`` (torch): Adam written out (``torch.optim`` costs ~2 CPU-s of imports per job).
- ``ppo``, ``dqn`` (torch): small standard learners (see their docstrings).
Nothing here imports torch at module level except ``nets``, ``optim``, ``ppo`` and ``dqn``.
"""
