"""The 57 papers of the project: number, slug, tier and title (from the paper specs).

Implemented papers also have config/papers/<slug>.yaml and src/icml26/papers/<module>/;
the summary page lists every paper here, implemented or not.
"""

from __future__ import annotations

CATALOG: tuple[tuple[int, str, str, str], ...] = (
    (1, 'avg-reward-td', 'C', 'Two-trajectory average-reward TD ("Bridging the Gap Between Average and Discounted TD Learning")'),
    (2, 'cryoace', 'C', 'Atom-centric cryo-EM automodelling with recycling and local-resolution guidance (CryoACE)'),
    (3, 'kmm-dataset-valuation', 'B', 'Convex dataset-level valuation by kernel mean matching in gradient space (KMM)'),
    (4, 'fedcgnm', 'B', 'Federated Class-Grouped Normalized Momentum for class imbalance (FedCGNM, FedHOO)'),
    (5, 'telecomts', 'C', 'Observability time series with absolute scale from a 5G network (TelecomTS)'),
    (6, 'telescope-perplexity', 'B', 'Zero-shot LLM-text detection from token-repetition probability (Telescope Perplexity)'),
    (7, 'cdot', 'B', 'Convex Distance Operator Transport (CDOT)'),
    (8, 'time-peft', 'B', 'Complexity-based parameter-efficient fine-tuning of time-series foundation models (Time-PEFT)'),
    (9, 'ctf-dojo', 'C', 'Execution-verified agent trajectories from an executable CTF runtime (CTF-Dojo)'),
    (10, 'bear', 'C', 'Skill-level diagnosis of embodied MLLMs and a tool-augmented agent (BEAR, BEAR-Agent)'),
    (11, 'transformer-holder-approx', 'C', 'Approximation upper/lower bounds for Hölder functions with Transformers'),
    (12, 'lamp', 'B', 'Linear affine mixing of aligned SDF decoders for parameter-controlled shape generation (LAMP)'),
    (13, 'qkmeans', 'A', 'Fast k-means seeding under the manifold hypothesis (Qkmeans)'),
    (14, 'unirrm', 'C', 'Unified reasoning reward model with adaptive rubrics (UniRRM, MixReward)'),
    (15, 'junta-learning', 'A', 'Learning junta distributions and quantum junta states'),
    (16, 'st-gpa', 'B', 'Certified poisoning robustness for sparse graphs (ST-GPA)'),
    (17, 'embedding-generalization', 'A', 'Generalization from embedding dimension and distributional convergence'),
    (18, 'multihal', 'C', 'KG-grounded multilingual multi-hop hallucination benchmark (MultiHal)'),
    (19, 'privasis', 'C', 'Synthetic private-data corpus and compact text sanitizers (Privasis)'),
    (20, 'apm', 'C', 'Assistive Prompt Mediation under accessibility-driven input noise (APM)'),
    (21, 'diskd', 'A', 'Discrete-time survival knowledge distillation for competing risks (DiSKD)'),
    (22, 'outformer', 'B', 'Zero-shot tabular outlier detection with a prior-fitted transformer (OutFormer)'),
    (23, 'flowdup', 'B', 'Personalized federated learning for unlabeled clients in a low-dimensional subspace (FLowDUP)'),
    (24, 'cofrgenets', 'B', 'Continued-fraction components for generative transformers (CoFrGeNets)'),
    (25, 'clasp', 'B', 'Region-anchored interactive teaching for imitation learning (CLASP)'),
    (26, 're-trac', 'C', 'Cross-trajectory state compression for search agents (Re-TRAC)'),
    (27, 'std-former', 'B', 'Image-conditioned texton dictionaries for texture recognition (STD-Former)'),
    (28, 'feature-unlearning', 'B', 'Fast-slow dynamics of feature learning and unlearning in two-layer networks'),
    (29, 'smo-multilingual-safety', 'B', 'Spatial-margin-gap optimisation for cross-lingual safety (SMO)'),
    (30, 'vdw-gnn', 'B', 'Vector diffusion wavelets for geometric GNNs (VDW-GNN)'),
    (31, 'stage-accountability', 'A', 'Attributing model behaviour to training stages'),
    (32, 'rollout-scheduling', 'C', 'Contextual-bandit rollout scheduling for RLVR (CBS)'),
    (33, 'prm-adaptive-tts', 'C', 'Verifier-guided adaptive test-time compute'),
    (34, 'ia-sft', 'B', 'Influence-aware selection of low-confidence pseudo-labels for hyperspectral change detection (IA-SFT)'),
    (35, 'cde-dataset-distillation', 'B', 'Scaling and coverage laws of dataset distillation (CDE analysis)'),
    (36, 'sad-flower', 'A', 'Control-theoretic guidance of flow-matching planners (SAD-Flower)'),
    (37, 'lagea', 'B', 'Language-guided shaping rewards from episodic reflections (LaGEA)'),
    (38, 'sim2real-safe-metarl', 'B', 'Latent-context meta-RL with uncertainty-driven risk adaptation for safe Sim2Real transfer'),
    (39, 'medmosaic', 'C', 'A synthetic miniature of the MedMosaic medical-audio QA benchmark'),
    (40, 'protdis', 'B', 'Knowledge-guided disentanglement of protein micro-environment embeddings (ProtDiS / KON)'),
    (41, 'eec-matlogic', 'B', 'Scope-bound exclusions as executable contracts (EEC + MatLogic executor)'),
    (42, 'pro-dyn', 'B', 'Where the dynamics block sits decides forecasting quality (PRO-DYN nomenclature)'),
    (43, 'hmer-schema', 'C', 'Schema-anchored structure-aware recognition of 2-D handwritten math (HMER-Bench + SASR)'),
    (44, 'chatsfm', 'B', 'Zero-shot channel adapter for frozen univariate time-series foundation models (ChaTSFM, a.k.a. Chada)'),
    (45, 'impquant', 'B', 'Token-importance-reweighted PTQ calibration for vision-language models (ImpQuant)'),
    (46, 'smac', 'B', 'Score-matched critics for drop-free offline-to-online RL (SMAC)'),
    (47, 'fisher-dimension', 'A', 'The Fisher dimension predicts instance-specific sample complexity of MEC recovery'),
    (48, 'mudo-com', 'A', 'Multi-Domain Covariance Matching (MuDo-CoM) for dependent latent components'),
    (49, 'castle', 'B', 'Causal Attention with Lookahead Keys (CASTLE)'),
    (50, 'cyber-reward-sparsity', 'B', 'Sparse vs dense rewards for autonomous cyber defence ("Beyond Rewards in RL for Cyber Defence")'),
    (51, 'codemamba', 'C', 'Collaborative dual-stream multi-frame infrared small target detection (CodeMamba)'),
    (52, 'fedqueue', 'A', 'Queue-aware federated learning across HPC facilities (FedQueue)'),
    (53, 'rl-vs-sft-forgetting', 'B', 'RL forgets less than SFT because of on-policy data ("Retaining by Doing")'),
    (54, 'nested-dro', 'A', 'Robust learning via nested distributionally robust optimization (nested DRO)'),
    (55, 'muloco', 'B', 'Muon as the inner optimizer of DiLoCo (MuLoCo)'),
    (56, 'also-social', 'C', 'Adversarial online strategy optimization for social agents (ALSO)'),
    (57, 'logdiff', 'B', 'Logical guidance for the exact composition of diffusion models (LOGDIFF)'),
)


def module_name(slug: str) -> str:
    """Python module name of a paper slug (dashes become underscores)."""
    return slug.replace("-", "_")


def entry(slug: str) -> tuple[int, str, str, str]:
    for row in CATALOG:
        if row[1] == slug:
            return row
    raise KeyError(slug)
