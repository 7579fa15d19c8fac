"""codemamba: collaborative dual-stream multi-frame infrared small-target detection (metadata)."""

TITLE = "Collaborative dual-stream multi-frame infrared small target detection (CodeMamba)"
TIER = "C"
ABSTRACT = "004_523bb06ad815be1c.txt, abstract 13"

SUMMARY = """\
Multi-frame infrared small-target detection must find targets of a few pixels with almost no
shape or texture, amid moving clutter, with extreme foreground/background imbalance. CodeMamba
splits the job into two complementary streams built on Mamba state-space blocks. An implicit
stream models the regular background (the manifold the clutter lives on) and flags anomalies.
An explicit stream tracks motion consistency and the spatio-temporal singularity of a moving
point. A Bayesian fusion module predicts each stream's observation noise and weights the
streams by it. The paper reports state-of-the-art results on IRDST and DAUB and better
sensitivity to point-like targets.

Only a proxy is possible here (tier C: no paper text, no code, no benchmark data offline). We
test the design principle on synthetic infrared sequences built with known failure regimes:
camera drift (hard for background modelling), slow targets (hard for the motion stream) and
static point-like clutter (which defeats single-frame detection). CodeMamba-lite has a shared
frame encoder, a background predictor whose residual feeds the implicit head, a selective
state-space scan over time (an S6-like stand-in for Mamba) feeding the explicit head, and an
inverse-variance fusion of the two streams' logits with Kendall & Gal heteroscedastic losses.
It is compared with a single-frame CNN, an early-fusion multi-frame CNN, each stream alone,
mean fusion without variance heads, and a classical top-hat x temporal-difference detector, on
IoU, nIoU, Pd, Fa, Pd of point-like targets and the regime-wise IoU and variances.
"""
FIDELITY = """\
- **Everything architectural is INFERRED** (from the abstract, as the spec says): the
  encoder (two 3x3 convs, GELU, shared over time), the background predictor (three 3x3 convs on
  F_1..F_(T-1) and a 5x5 box blur of F_T), the implicit head (dilations 1, 2, 1 on the residual
  and e_T), the explicit stream (1x1 projection of (e_t, e_t - e_(t-1)) with e_0 := e_1, the
  selective scan, depthwise 3x3 + 1x1 mixing with GELU, head 3x3 conv + GELU + 1x1 conv), the
  fusion v_k = softplus(s_k) + 1e-3 and the loss weights. The single-stream ablations keep their
  stream's heteroscedastic term and (implicit) the background MSE; mean fusion has neither
  variance heads nor heteroscedastic loss, as the spec says. SF-CNN and MF-CNN train on
  SoftIoU + 0.5 focal. Parameter counts (computed) are in Table 1; CodeMamba-lite at c = 12 is
  smaller than the spec's rough "about 25k".
- **Not Mamba.** The explicit stream is a minimal selective (input-gated, diagonal) state-space
  scan over the T frames per pixel and channel, no hardware-aware kernel and no spatial scan;
  the full profile keeps this stand-in (mamba-ssm is not installed, no GPU assumed).
- **Heteroscedastic loss.** The spec writes "mean over 4 Monte-Carlo draws of BCE(z_k +
  sqrt(v_k) eps)" and cites Kendall & Gal's classification form, in which a stream lowers its
  loss by raising v_k where it is wrong. The mean of BCE over draws never rewards a larger v
  (BCE is convex in the logit: Jensen), so it cannot do what the spec says; we use Kendall &
  Gal's form, -log of the Monte-Carlo mean of the likelihood (het_form: log_mean_lik). The
  literal reading is available as het_form: mean_bce (tested to have the opposite incentive).
- **Data.** The spec's generator (numpy + scipy.ndimage: two smooth fields, blobs, STATIC
  point clutter moving with the camera, drift and slow-target regimes drawn independently,
  SCR = amplitude / s.d. of the local 9x9 clutter, noise, per-sequence min-max, mask = PSF >=
  0.5 of its brightest pixel). INFERRED details: the local s.d. is taken on the smooth clutter
  (fields + blobs) at the spot's or target's last-frame position; a random sub-pixel phase makes
  every frame interpolated alike; the last-frame target centre is at least 3 px inside the
  frame; the mask has 1 to 6 pixels (the spec says 1-5; a centre between pixels with
  sigma_t = 1 covers 6). One data set (data seed 0) is shared by every method and seed, as the
  spec says, so fresh seeds (seed_offset) change initialisation, batches and Monte-Carlo noise,
  not the data.
- **Scaled down at default (CPU budget; the rule was fixed before any claim was computed).**
  The spec's setting (32x32 frames, batch 32, 400 steps) has 16 times the pixel-steps of the
  default's per run, and the grid has 20 dual-stream runs: at the default's measured cost per
  run (Table 1's CPU column) it would exceed the 180 CPU-s budget many times over. Default
  uses 16x16 frames (the clutter counts scaled with the area: 1 blob and 1 static spot per
  sequence instead of 2-4 each), batch 16 and 200 steps (Adam, cosine decay), with
  3000 / 500 / 1000 sequences as in the spec. Random 16x16 crops of 32x32 frames were tried
  first and rejected because no detector learned from them (empty crops dominate the batch
  SoftIoU). Smoke is a plumbing test (20 steps, nothing is learned). Full runs the spec's
  full profile (64x64 frames, T = 7, 20k / 2k / 4k sequences, c = 32, 5k steps, lr 2e-3)
  with 10 seeds.
- **Learning rate (a deviation from the spec's fixed 2e-3 at default).** At the default budget
  the spec's lr leaves the detectors near IoU 0 (side experiment, outside the pipeline:
  `python -m icml26.papers.codemamba.side --method mf-cnn --frame-size 16 --batch 16 --steps
  200 --lr 0.002 --blobs 1 1 --spots 1 1`; and the pilot row for 0.002 in the report's
  learning-rate table). The lr is therefore chosen by a rule fixed in config, on validation data:
  the MF-CNN baseline (the pilot, its own seed stream) is trained at every value of lr_grid
  (2e-3, 6e-3, 1.8e-2) with the run budget, the value with the best validation IoU is used by
  every learned method, and a choice on the grid's edge extends the grid by a factor 3 (at most
  twice). The report shows the final grid, the pilot's validation IoU and the choice. Full keeps
  the spec's 2e-3 (one-value grid). At the spec's own setting (32x32, batch 32, 400 steps,
  lr 2e-3) MF-CNN also stays near IoU 0 (side experiment: the command above with
  `--frame-size 32 --batch 32 --steps 400 --blobs 2 4 --spots 2 4`), so the spec's premise that
  400 steps train these detectors does not hold on our data either.
- **Classical baseline.** white_tophat (5x5) of F_T times |F_T - median(F_1..F_(T-1))|; the
  threshold is the smallest on a grid of upper quantiles of the validation scores (levels
  1 - 10^-k, k = 1..5) whose validation Fa is <= 1e-3. It is untrained and deterministic: its
  rows repeat per seed.
- **Metrics** follow the spec: dataset IoU, nIoU over target-present images, Pd (an
  8-connected component centroid within 3 px), Fa (pixels of unmatched components / all pixels,
  reported x 1e-4), Pd_point (sigma_t <= 0.6), IoU per (drift x slow) cell, CodeMamba-lite's
  mean v1, v2 at target pixels per cell, and the share of static clutter spots flagged
  (premise check). The detection rule is icml26.vision.metrics.detect's, vectorised over the
  test stack (tested equal). Probabilities are stored as float16 between train and evaluate.
- **Claims** are paired per seed (check_mean of the per-seed differences). Claim 2's
  "max(...) + 0.02" is checked as two parts (against each ablation), which is the same
  condition without the upward bias of a per-seed max. Two premises of the spec (each stream
  fails in its regime; static clutter defeats single-frame detection) are checked as sanity
  claims.
- **Not tested:** absolute IRDST / DAUB numbers, SOTA, speed, real Mamba blocks.
"""

METHODS = ("sf-cnn", "mf-cnn", "implicit-only", "explicit-only", "mean-fusion", "codemamba",
           "classical")
SETTINGS = ("synthetic-ir",)
PROPOSED = "codemamba"
BACKEND = "torch"
