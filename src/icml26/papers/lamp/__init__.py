"""lamp: linear affine mixing of aligned SDF decoders (metadata only)."""

TITLE = ("Linear affine mixing of aligned SDF decoders for parameter-controlled shape generation "
         "(LAMP)")
TIER = "B"
ABSTRACT = "000_0e29b462e842f6da.txt, abstract 12"

SUMMARY = """\
Engineering design needs shapes that meet explicit parameters, often from few examples and
beyond the range of existing designs. LAMP fits one signed-distance-function (SDF) decoder to
each exemplar, always starting from the same initial weights w0, so that the fitted weights lie
in an aligned, locally linear region of weight space. A new design with parameters p* is made
by solving for affine mixing coefficients alpha (summing to one, possibly negative) whose
mixture of the exemplars' parameters equals p*, and applying the same alpha to the decoder
weights, w* = W^T alpha. A linearity-mismatch score (LM) flags mixtures that leave the locally
linear regime. The paper reports data-efficient interpolation from about 50 samples, safe
extrapolation up to 100% beyond the training range, and wins over a conditional autoencoder and
Deep Network Interpolation (DNI) on 3-D car and aircraft families.

Here the shapes are a 2-D vehicle side profile (a body box with a cabin box on top, rounded
corners) with parameters (length, height, cabin height) and an analytic SDF, so every target,
also far outside the training range, has an exact ground truth. Per seed, 50 Latin-hypercube
exemplars are overfit from w0 in one batched computation; N = 10, 25, 50 use nested subsets.
LAMP (minimum-norm exact mixing over all N), LAMP-local (the 8 nearest exemplars), a
conditional decoder, DNI, the nearest exemplar and LAMP without alignment (independent random
initialisations) generate 40 interpolation targets and 15 targets at each of +25%, +50% and
+100%. Designs are scored by IoU with the analytic shape on a 128 x 72 grid, the relative
error of the parameters measured on the generated shape, validity (one component, no holes)
and LM.
"""
FIDELITY = """\
- **Source.** No official code exists; method, baselines, data and metrics follow the spec.
  The mixing problem min ||P_C^T alpha - p*_C||^2 s.t. 1^T alpha = 1 is solved by its
  minimum-norm exact solution alpha = A^T (A A^T)^-1 b, A = [P_C^T; 1^T], b = [p*_C; 1] (a ridge
  of 1e-6 on A A^T only when it is ill-conditioned); tested by hand and against numpy's
  least-squares minimum-norm solution.
- **Substituted data.** The DrivAerNet++ / BlendedNet / industrial 3-D meshes are replaced by
  the spec's 2-D side-profile family with an analytic SDF (vision.images.box_sdf); no CFD.
- **One change to the spec's SDF (ours, before any result).** The spec's cabin box sits
  exactly on the body, so min(s_body, s_cabin) is 0 along the whole shared edge, a zero-level
  seam inside the shape. The cabin box here reaches 0.05 down into the body: the outer shape
  is the same except the two junction notches, and the seam is gone.
- **INFERRED (as the spec marks it): the LM definition.** LM(alpha) = mean over grid points
  with |sum_i alpha_i f_wi(x)| < 0.2 of |f_(sum_i alpha_i w_i)(x) - sum_i alpha_i f_wi(x)|.
- **Our choices where the spec is silent.** (a) Training points are drawn every step from a
  fixed pool of 8,192 uniform and 8,192 near-surface points per shape (DeepSDF's practice of
  pre-sampled points), 512 of each per step and decoder. Surface points are sampled on the
  box faces, moved onto the zero level set by Newton steps, and offset by N(0, 0.03^2). (b)
  Decoders start from nn.Linear's default initialisation with the output layer scaled by 0.1
  and a zero output bias, for w0, the no-alignment ablation and the conditional decoder alike:
  the clamped L1 loss has no gradient where an output starts beyond the clamp, and with the
  plain default some decoders never moved. (c) Adam is icml26.lm.optim's update (betas 0.9,
  0.999, no weight decay), the same arithmetic as torch.optim.Adam without its import cost.
  (d) Nearest neighbours (LAMP-local, DNI, nearest exemplar) use distances in parameters
  scaled by their training-range widths. (e) The conditional decoder reads raw (x, y, l, h, c)
  and gets each batch point from a random one of its N shapes. (f) Parameters are measured on
  the generated grid field with sub-cell zero crossings (linear interpolation between grid
  points, as marching squares does), so the measurement is exact on the analytic shapes
  (sanity claim S1). An empty design measures 0 (a 100% error) and has IoU 0. (g) The gallery
  target is the centre of the range with length +100% of the range width beyond it.
- **Scale (one cut, for the CPU budget).** The default runs the spec's grid (all six methods,
  N = 10, 25, 50, every target set, the spec's step counts, learning rates and network sizes)
  on 5 seeds instead of 3, everything in one batched job. With the spec's points per step it
  measured above the 180 CPU-s budget, so the default draws half of them per step for every
  decoder alike: 512 (w0, overfitting, no-alignment ablation) instead of 1,024, and 1,024
  (conditional decoder) instead of 2,048. Measured effect (a side run of the default with the
  spec's counts on the same seeds, outside the pipeline; reproduce by deleting the default's
  `params:` line in config/papers/lamp.yaml): the exemplar-based methods (LAMP, LAMP-local, DNI,
  nearest) had slightly better exemplar fits and slightly higher IoU everywhere; the
  conditional decoder gained at the extrapolation levels but not on interpolation targets at
  N = 25 and 50. Every claim had the same verdict except C4 (reproduced there; here its AUROC
  interval reaches below 0.75). The differences are in the result note of issue 17.
  Smoke follows the spec's smoke (N = 10, 120
  overfitting steps, 8 targets, 1 seed) with shorter w0 and conditional-decoder training.
  Full keeps the spec's point counts.
- **Premise checked, not met.** The spec calls the 400-step fits "overfitting"; the report
  shows each setting's mean exemplar self-IoU (every exemplar decoder against its own
  analytic shape, "Premises and diagnostics" table and claim C1's note). The small decoder
  (2 -> 32 -> 32 -> 1) after the spec's steps does not reproduce its exemplars exactly, which
  bounds what any mixture can reach (claim C1's 0.90). We kept the spec's sizes and steps.
- **Full profile (INFERRED details).** It adds 10 seeds, the 3-D variant (body, cabin of 0.8
  the width, two wheel-arch cylinders cut out; parameters length, height, cabin, width, arch
  radius with the ranges in shapes.py; a 64^3 grid; N = 50 and 200), partial constraints
  (only the length is constrained; the ground truth is the analytic shape at the mixture's
  implied parameters) and a performance-guided choice inside the feasible alpha set
  (minimise frontal height h + c + 0.5 ||alpha||^2, a geometric drag proxy; closed form).
  These are sketches: no CFD, and the 3-D family's width, arches and ranges are ours. In
  3-D, validity counts 26-connected components (vision.metrics.count_components).
- **Conditional autoencoder** reduced to its conditional decoder, as the spec says.
"""

METHODS = ("lamp", "lamp-local", "cond-decoder", "dni", "nearest", "lamp-noalign")
SETTINGS = None
PROPOSED = "lamp"
BACKEND = "torch"
