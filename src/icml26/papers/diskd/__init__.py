"""Discrete-time survival knowledge distillation for competing risks (DiSKD). Metadata only."""

TITLE = "Discrete-time survival knowledge distillation for competing risks (DiSKD)"
TIER = "A"
ABSTRACT = "003_a30f62c7b2d8f5c0.txt, abstract 2"

SUMMARY = """\
Competing-risks prediction (several mutually exclusive event types) is hard when events are
rare and the local cohort is small. DiSKD trains a deep discrete-time competing-risks model
(per interval a softmax over {no event, cause 1..K}; survival and cumulative incidence follow)
on the local censored likelihood plus a cause-specific, time-dependent Kullback-Leibler term
towards an external teacher's predictions: only the teacher's prediction function is shared,
never its data. The KL is taken between the teacher's and the student's joint laws of (event
interval, cause); by the chain rule it is a sum of per-interval categorical KLs weighted by
the teacher's probability of still being at risk, so censored subjects still receive
information after their censoring time. Teachers with coarser outcome definitions are
matched by aggregating the student's causes through a cause map; several teachers are weighted
adaptively by their validation likelihood against a local-only "null" model, so misspecified
teachers get exponentially small weight. Here this is checked on the spec's simulation
(K = 2 rare causes, T = 10 intervals, 500 local subjects, 20000-subject teachers) in four
settings: compatible, misspecified, both, and any-event teacher.
"""

FIDELITY = """\
- **Source**: abstract only; no code. Model, loss, generator and baselines follow the spec.
- **INFERRED: KL weighting.** KL_joint(x) = sum_t S_T(t-1|x) KL(h_T(.|t,x) || h_S,agg(.|t,x)),
  the exact KL between the teacher's and student's joint (interval, cause) laws (tested
  against the direct KL of the joint distributions), applied to every local training subject
  over all T intervals; coarse teachers compare against the student aggregated through the
  cause map (any event = cause 1 + cause 2).
- **INFERRED: teacher weights.** w = softmax over {null, teacher_1..J} of the total
  validation log-likelihood on the local validation set (250 subjects, never used for gradient
  steps), all at the coarsest common outcome definition; teacher j gets KD weight lambda w_j
  (lambda = 1), the null share means no distillation. The null model is the local-only model.
- **Numbers** (a_k, network, recipe) are the spec's. a_1, a_2 were set once by bisection on
  10^5 draws (sim.calibrate_intercepts) and are stored as constants.
- **Teachers (scaled)**: trained on their 20000-subject cohort (80% fit, 20% early stopping)
  with mini-batch Adam (batch 256, a starting cap of 16 epochs, extended by the epoch rule
  below) instead of 400 full-batch epochs, to fit the CPU budget. Teacher quality is visible
  in the teacher-only row.
- **Training** in float32 (numpy, hand-written gradients, icml26.fed's MLP), full batch,
  Adam with L2 weight decay 1e-4, early stopping on validation NLL with patience 50 (best
  epoch kept) within a starting cap of 400 epochs (the spec's; see Selection). Every method of
  a seed starts from the same initial weights and sees the same local cohort and test set
  (paired). local-only does not depend on the setting: it is trained once per seed (it is also
  DiSKD's null model) and reported in every setting; all students are trained in one job
  (shard_by: []) for that reason. With one compatible teacher (S1) DiSKD's weight on it is 1
  up to float32 rounding (its validation log-likelihood beats the null model's by many nats;
  the learned weights are in metrics.csv), so DiSKD and naive KD coincide in S1.
- **Selection (grid-edge rule)**: no hyper-parameter is picked from a grid here; lambda = 1 is
  the spec's fixed value, so there is no lambda grid to extend (the lambda = 10 side
  experiment below selects nothing). The one value chosen on validation data is the
  early-stopping epoch, and the project's grid-edge rule applies to it for every model alike
  (students of every method, and the teachers behind teacher-only): a model whose best
  validation epoch is the last epoch of its cap has the cap doubled and trains on, at most
  twice (cap x 4); a best epoch inside the cap stops exactly as before. INFERRED: the ratio 2
  for an epoch range (a cap has no grid ratio of its own). The report's epoch table gives each
  model's best epoch and final cap per seed, and each claim's note names the runs it reads
  that were extended or stay on the edge after the cap.
- **Premises**: what the spec states as fact (rare events CIF_1(10) ~ 0.08 and CIF_2(10) ~
  0.05; ~40 local cause-1 events; a misspecified teacher gets exponentially small weight) is
  measured in the run and shown in the report's premise table with a reading fixed in
  claims.py ("~": within 25%; "exponentially small": w <= 0.01). The notes of claims 2 and 3
  name the seeds where the weight premise did not hold.
- **Teacher-only** is reported only where the teacher's outcome matches (S1, S2).
- **Claim 5 (sanity)** is checked at the spec's lambda = 1. The claim's note gives both
  C-indices and the epoch choices of the runs it reads, computed from the run. A rerun with
  lambda = 10 is a side experiment outside the pipeline (`python -m
  icml26.papers.diskd.side_lambda --lam 10 --seeds 0 1 2 3 4`). The mechanism (KL term,
  weights) is tested separately, and the verdict is kept as measured.
- **Statistics**: paired per-seed differences with check_mean (95% t-interval), 5 seeds at
  default and 20 at full; "in at least 4 of 5 seeds" is the fraction of seeds with
  w >= 0.8 (check_fraction, at least 0.8), so it means the same at 20 seeds.
- **C-index**: Wolbers' competing-risks concordance truncated at T over *all* comparable pairs
  of the uncensored test set (exact), not 200000 sampled pairs. It is tested against a
  brute-force pairwise count, a hand case with ties, and lifelines' concordance_index (Harrell's
  C, which it equals with one cause); lifelines is a test-only dependency.
- **Missing (full profile)**: the cause-specific Cox baseline (lifelines), K = 3 with merged
  causes, the coarse-time (5-interval) teacher and the sweep of local n over {250, 500, 1000,
  2000} are not implemented; the full profile runs 20 seeds with longer teacher training and
  adds the unweighted-KL ablation (kd-unweighted: adaptive weights, per-interval KL without
  the S_T weighting).
- Only simulations; the paper's clinical applications are not available offline.
"""

METHODS = ("local-only", "teacher-only", "naive-kd", "diskd", "kd-unweighted")
SETTINGS = ("S1", "S2", "S3", "S4")
PROPOSED = "diskd"
BACKEND = "numpy"
